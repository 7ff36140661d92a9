/**
 * The patch of a container's workspace, computed inside it by the host's algorithm
 * (src/agent/patch.ts over src/container/patch.ts `containerPlace`), against real Docker (a
 * private daemon) and real Podman on the cached test image: the repository's filter and diff
 * programs never run, a required filter that is not installed still gives the patch, nothing
 * temporary stays inside, the large-file filter is the host's, a FIFO where git reads an ignore
 * list is named, and a `git` the model put first on PATH that prints without end or never returns
 * is stopped by a limit (the host neither fills its memory nor waits for ever).
 */
import assert from "node:assert/strict";
import { PatchError, patchIn, recordBaselineIn, workspacePatch } from "../../../src/agent/patch.ts";
import { recordBaseline } from "../../../src/agent/patch.ts";
import type { Container } from "../../../src/container/container.ts";
import { containerPlace } from "../../../src/container/patch.ts";
import { GitLimitError } from "../../../src/policy/git.ts";
import { git } from "../../helpers/repo.ts";
import { runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { type TestRuntime, testRuntime } from "../../helpers/containers.ts";

const MAKE_REPO = (dir: string) =>
  `mkdir -p ${dir} && cd ${dir} && git init -q . && printf 'one\\n' > a.txt && git add a.txt && ` +
  "git -c user.name=t -c user.email=t@t commit -qm init";

/** A fresh container of the test image that sleeps; removed by the returned dispose. */
async function sleeper(rt: TestRuntime) {
  const id = await rt.cli("run", "-d", "--network", "none", rt.image, "sleep", "100000");
  const sh = (script: string) => rt.cli("exec", id, "sh", "-c", script);
  await sh("mkdir -p /tmp/deft /work");
  const container = (workspace: string) =>
    ({
      cli: rt.name === "podman" ? { program: "podman", ociRuntime: "runc" } : { program: "docker" },
      id,
      workspace,
    }) as unknown as Container;
  return {
    id,
    sh,
    container,
    [Symbol.asyncDispose]: async () => {
      await rt.cli("rm", "-f", id).catch(() => {});
    },
  };
}

/** `promise`, or a failure after `ms`: a test never hangs on what it checks. */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) =>
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name:
      `container patch (${runtime}): the host's algorithm inside, hostile repositories and gits`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn(t) {
      await using rt = await testRuntime(runtime);
      const before = Deno.env.get("DOCKER_HOST");
      if (rt.env.DOCKER_HOST) Deno.env.set("DOCKER_HOST", rt.env.DOCKER_HOST);
      try {
        await using box = await sleeper(rt);

        await t.step(
          "no filter or diff program of the repository runs; a missing required filter still gives the patch",
          async () => {
            const repo = "/work/filters";
            await box.sh(MAKE_REPO(repo));
            await box.sh([
              `cd ${repo}`,
              "git config filter.evil.clean 'touch /tmp/marker-clean; cat'",
              "git config filter.evil.smudge 'touch /tmp/marker-smudge; cat'",
              "git config filter.evil.required true",
              "git config diff.evil.textconv 'touch /tmp/marker-textconv; cat'",
              "git config diff.evil.command 'touch /tmp/marker-diff'",
              // git-lfs is not installed in the image: a required filter git cannot start.
              "git config filter.lfs.process 'git-lfs filter-process'",
              "git config filter.lfs.required true",
              "printf '*.txt filter=evil diff=evil\\n*.dat filter=lfs\\n' > .gitattributes",
            ].join(" && "));
            const place = containerPlace(box.container(repo));
            const baseline = await recordBaselineIn(place, repo);
            assert.ok(baseline, "no baseline");
            await box.sh(
              `cd ${repo} && printf 'two\\n' > a.txt && printf 'new\\n' > new.txt && ` +
                "printf 'data\\n' > w.dat",
            );
            const patch = await patchIn(place, { baseline });
            assert.match(patch, /^\+two$/m);
            assert.match(patch, /^\+\+\+ b\/new\.txt$/m);
            assert.match(patch, /^\+\+\+ b\/w\.dat$/m);
            assert.equal(await box.sh("ls /tmp | grep marker || true"), "");
            // The attack is real: git run plainly there starts the clean filter.
            await box.sh(`cd ${repo} && git add -A 2>/dev/null || true`);
            assert.match(await box.sh("ls /tmp | grep marker || true"), /marker-clean/);
            await baseline.dispose();
          },
        );

        await t.step(
          "a repository under a path with ':' gets its baseline and patch; no temporary index or objects stay inside",
          async () => {
            const repo = "/work/clean:1";
            await box.sh(MAKE_REPO(repo));
            const state = () =>
              box.sh(
                `cd ${repo} && find .git -type f ! -name '*.lock' | sort | xargs sha256sum; ` +
                  "ls -A /tmp/deft",
              );
            const place = containerPlace(box.container(repo));
            const baseline = await recordBaselineIn(place, repo);
            assert.ok(baseline);
            const atStart = await state();
            assert.match(atStart, /baseline\./);
            await box.sh(`cd ${repo} && printf 'two\\n' > a.txt && printf 'new\\n' > b.txt`);
            for (let i = 0; i < 2; i++) {
              const patch = await patchIn(place, { baseline });
              assert.match(patch, /^\+two$/m);
              assert.equal(await state(), atStart, "something stayed after the patch");
            }
            const noBaseline = await patchIn(place);
            assert.match(noBaseline, /^\+two$/m);
            assert.equal(await state(), atStart);
            await baseline.dispose();
            let left = "";
            for (let i = 0; i < 50; i++) {
              left = await box.sh("ls -A /tmp/deft");
              if (left === "") break;
              await new Promise((r) => setTimeout(r, 100));
            }
            assert.equal(left, "", "the baseline's store stayed after dispose");
          },
        );

        await t.step("a 20 MB binary is left out as on the host: the same patch", async () => {
          const repo = "/work/big";
          await box.sh(MAKE_REPO(repo));
          const place = containerPlace(box.container(repo));
          const baseline = await recordBaselineIn(place, repo);
          assert.ok(baseline);
          const edit = "printf 'two\\n' > a.txt && head -c 20971520 /dev/zero > big.bin && " +
            "head -c 100000 /dev/zero > mid.bin && printf 'x\\000y' > small.bin && " +
            "head -c 200000 /dev/zero | tr '\\000' 'a' > text.txt";
          await box.sh(`cd ${repo} && ${edit}`);
          const inside = await patchIn(place, { baseline });
          baseline.dispose();

          await using tmp = await tempDir("deft-big-");
          await new Deno.Command("sh", { args: ["-c", MAKE_REPO(tmp.path)] }).output();
          const hostBaseline = await recordBaseline(tmp.path);
          try {
            const made = await new Deno.Command("sh", { args: ["-c", edit], cwd: tmp.path })
              .output();
            assert.ok(made.success);
            const onHost = await workspacePatch(tmp.path, { baseline: hostBaseline });
            assert.doesNotMatch(onHost, /big\.bin|mid\.bin/);
            assert.match(onHost, /small\.bin/);
            assert.match(onHost, /text\.txt/);
            assert.equal(inside, onHost);
          } finally {
            hostBaseline?.dispose();
          }
          // Nothing was staged in the host repository either.
          assert.equal(await git(tmp.path, "diff", "--cached", "--name-only"), "");
        });

        await t.step(
          "deft run in a container: a 20 MB binary the run made is left out of --patch-path",
          async () => {
            await using dir = await tempDir();
            const patchPath = `${dir.path}/run.patch`;
            const mock = MockLLM.start([
              chatToolCalls([["bash", {
                command: "cd /testbed && head -c 20971520 /dev/zero > big.bin && " +
                  "echo '# run' >> calc.py",
              }]]),
              chatToolCalls([["task_done", {}]]),
            ]);
            const run = await runMocked(mock, "t", "/testbed", {
              extra: [
                "--docker-image",
                rt.image,
                "--container-runtime",
                rt.name,
                "--patch-path",
                patchPath,
              ],
              env: rt.env,
            }).finally(() => mock.close());
            assert.equal(run.code, 0, run.stderr);
            const patch = await Deno.readTextFile(patchPath);
            assert.match(patch, /^\+# run$/m);
            assert.doesNotMatch(patch, /big\.bin/);
          },
        );

        await t.step(
          "a tracked file grown to a 4 GB sparse file is not read: named in the patch's first line",
          async () => {
            const repo = "/work/sparse";
            await box.sh(
              `${MAKE_REPO(repo)} && printf 'small\\n' > disk.img && git add disk.img && ` +
                "git -c user.name=t -c user.email=t@t commit -qm disk",
            );
            const place = containerPlace(box.container(repo));
            const baseline = await recordBaselineIn(place, repo);
            assert.ok(baseline, "no baseline");
            await box.sh(`cd ${repo} && truncate -s 4G disk.img && printf 'two\\n' > a.txt`);
            const patch = await within(60_000, patchIn(place, { baseline }));
            await baseline.dispose();
            assert.match(patch.split("\n")[0], /^# Deft left "disk\.img" out of this patch/);
            assert.match(patch, /^\+two$/m);
            assert.doesNotMatch(patch, /^diff --git a\/disk\.img/m);
          },
        );

        await t.step("a FIFO named .gitignore is named, not waited on", async () => {
          const repo = "/work/fifo";
          await box.sh(MAKE_REPO(repo));
          const place = containerPlace(box.container(repo), { timeoutMs: 10_000 });
          await box.sh(`cd ${repo} && printf 'two\\n' > a.txt && mkfifo .gitignore`);
          await assert.rejects(within(60_000, patchIn(place)), (e: Error) => {
            assert.ok(e instanceof PatchError, `${e.name}: ${e.message}`);
            assert.match(e.message, /\.gitignore is not a regular file/);
            return true;
          });
        });

        await t.step(
          "a git first on PATH that prints without end is cut at the output limit",
          async () => {
            const repo = "/work/flood";
            await box.sh(MAKE_REPO(repo));
            await box.sh(
              "printf '#!/bin/sh\\nexec yes git\\n' > /usr/local/bin/git && " +
                "chmod +x /usr/local/bin/git",
            );
            try {
              const place = containerPlace(box.container(repo), {
                maxOutputBytes: 4 * 1024 * 1024,
                timeoutMs: 60_000,
              });
              const started = Date.now();
              await assert.rejects(within(90_000, patchIn(place)), (e: Error) => {
                assert.ok(e instanceof GitLimitError, `${e.name}: ${e.message}`);
                assert.match(e.message, /printed more than 4 MiB/);
                assert.match(e.message, /in the container/);
                return true;
              });
              assert.ok(Date.now() - started < 60_000, "stopped by the deadline, not the limit");
            } finally {
              await box.sh("rm -f /usr/local/bin/git");
            }
          },
        );

        await t.step(
          "a git first on PATH that never returns is stopped at the deadline",
          async () => {
            const repo = "/work/hang";
            await box.sh(MAKE_REPO(repo));
            await box.sh(
              "printf '#!/bin/sh\\nexec sleep 100001\\n' > /usr/local/bin/git && " +
                "chmod +x /usr/local/bin/git",
            );
            try {
              const place = containerPlace(box.container(repo), { timeoutMs: 3_000 });
              await assert.rejects(within(60_000, patchIn(place)), (e: Error) => {
                assert.ok(e instanceof GitLimitError, `${e.name}: ${e.message}`);
                assert.match(e.message, /did not finish within 3 s/);
                return true;
              });
            } finally {
              await box.sh("rm -f /usr/local/bin/git");
            }
          },
        );
      } finally {
        if (before === undefined) Deno.env.delete("DOCKER_HOST");
        else Deno.env.set("DOCKER_HOST", before);
      }
    },
  });
}
