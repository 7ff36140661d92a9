/**
 * A `git` the model replaced inside the container with one that never returns (issue 48, finding
 * 12), against real Docker and Podman: `deft run --docker-image … --patch-path` ends within git's
 * deadline (shortened with DEFT_GIT_DEADLINE_MS) plus a margin, saying the patch could not be
 * taken, and writes no patch; and a stopped git's processes — one that ignores SIGTERM and
 * started a child — are killed inside the container, and later steps there are refused at once.
 */
import assert from "node:assert/strict";
import { patchIn } from "../../../src/agent/patch.ts";
import type { Container } from "../../../src/container/container.ts";
import { containerPlace } from "../../../src/container/patch.ts";
import { GitLimitError } from "../../../src/policy/git.ts";
import { runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { testRuntime } from "../../helpers/containers.ts";

/** A git that ignores SIGTERM and SIGINT and waits in a child of its own. */
const SLEEPER_GIT = "printf '#!/bin/sh\\ntrap \"\" TERM INT\\nsleep 100007\\nsleep 100007\\n' " +
  "> /usr/local/bin/git && chmod +x /usr/local/bin/git";

/** The processes inside whose command line holds `word` (read from /proc, no `ps` needed). */
const COUNT_PROCESSES = (word: string) =>
  `n=0; for d in /proc/[0-9]*; do tr '\\000' ' ' < $d/cmdline 2>/dev/null | ` +
  `grep -q '${word}' && n=$((n+1)); done; echo $n`;

const DEADLINE_MS = 10_000;

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `a git that never returns inside the container (${runtime}) costs one deadline`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn(t) {
      await using rt = await testRuntime(runtime);

      await t.step(
        "deft run --patch-path ends within the deadline and a margin, saying there is no patch",
        async () => {
          await using dir = await tempDir();
          const patchPath = `${dir.path}/p.diff`;
          let lastAsked = 0;
          const mock = MockLLM.start(
            [chatToolCalls([["bash", { command: SLEEPER_GIT }]])],
            () => {
              lastAsked = Date.now();
              return chatToolCalls([["task_done", {}]]);
            },
          );
          const run = await runMocked(mock, "t", "/testbed", {
            extra: [
              "--docker-image",
              rt.image,
              "--container-runtime",
              rt.name,
              "--patch-path",
              patchPath,
            ],
            env: { ...rt.env, DEFT_GIT_DEADLINE_MS: String(DEADLINE_MS) },
          }).finally(() => mock.close());
          const ended = Date.now();
          assert.ok(lastAsked > 0, run.stderr);
          // Before: the turn's checkpoint, the "is it a repository" check and the patch each
          // waited out the deadline (3 × 10 s here, 3 × 300 s by default). Now one deadline, and
          // a margin for the kill inside and the container's removal on a loaded machine.
          const waited = ended - lastAsked;
          assert.ok(
            waited < 2.5 * DEADLINE_MS,
            `the run ended ${waited} ms after the model's last answer:\n${run.stderr}`,
          );
          assert.match(run.stderr, /could not compute the patch: .*did not finish within 10 s/);
          assert.match(run.stderr, /no patch written to/);
          assert.equal(await Deno.lstat(patchPath).then(() => true, () => false), false);
        },
      );

      await t.step(
        "a stopped git's processes are killed inside; later steps are refused at once",
        async () => {
          const id = await rt.cli("run", "-d", "--network", "none", rt.image, "sleep", "100000");
          try {
            const sh = (script: string) => rt.cli("exec", id, "sh", "-c", script);
            await sh(`mkdir -p /tmp/deft && ${SLEEPER_GIT}`);
            const container = {
              cli: runtime === "podman"
                ? { program: "podman", ociRuntime: "runc" }
                : { program: "docker" },
              id,
              workspace: "/testbed",
            } as unknown as Container;
            const env = Deno.env.get("DOCKER_HOST");
            if (rt.env.DOCKER_HOST) Deno.env.set("DOCKER_HOST", rt.env.DOCKER_HOST);
            try {
              const place = containerPlace(container, { timeoutMs: 3_000 });
              await assert.rejects(patchIn(place), (e: Error) => {
                assert.ok(e instanceof GitLimitError, `${e.name}: ${e.message}`);
                assert.match(e.message, /did not finish within 3 s/);
                return true;
              });
              assert.equal(await sh(COUNT_PROCESSES("sleep 10000[7]")), "0");
              const started = Date.now();
              await assert.rejects(patchIn(place), /was not run: a step before it .* stopped/);
              assert.ok(Date.now() - started < 1_000, "a later step waited again");
            } finally {
              if (env === undefined) Deno.env.delete("DOCKER_HOST");
              else Deno.env.set("DOCKER_HOST", env);
            }
          } finally {
            await rt.cli("rm", "-f", id).catch(() => {});
          }
        },
      );
    },
  });
}
