/**
 * `deft interactive` with its tools in a container, against real Docker (a private daemon) and
 * real Podman: the container flags work there, `-w` is a folder inside, approvals ask before
 * every command (readers too), and the container goes at Ctrl-D and on SIGTERM. Each check
 * looks for its own container by the id Deft printed: other tests share the Podman.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { tempDir } from "../../helpers/temp.ts";
import { type TestRuntime, testRuntime } from "../../helpers/containers.ts";
import { mockModelArgs as modelArgs } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

async function containerExists(rt: TestRuntime, id: string): Promise<boolean> {
  return await rt.cli("container", "inspect", id).then(() => true, () => false);
}

/** Polls `check` until it holds or `ms` pass. */
async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name:
      `container (${runtime}): deft interactive runs its tools inside and removes the container`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);
    await using home = await tempDir();
    const env = {
      ...rt.env,
      HOME: home.path,
      XDG_STATE_HOME: `${home.path}/state`,
      DENO_DIR: denoDir(),
    };
    const flags = ["--docker-image", rt.image, "--container-runtime", rt.name, "-w", "/testbed"];

    await t.step("approval asks before a reader too; Ctrl-D removes the container", async () => {
      const mock = MockLLM.start([
        chatToolCalls([["bash", { command: "ls /testbed" }]]),
        chatText("Listed the files."),
      ]);
      try {
        const run = await runDeftInPty(["interactive", ...modelArgs(mock), ...flags], [
          { expect: "deft> ", send: "list the files" + ENTER },
          {
            expect: "Approve this command\\?[\\s\\S]*\\$ ls /testbed[\\s\\S]*approve> ",
            send: "y" + ENTER,
          },
          { expect: "Listed the files\\.[\\s\\S]*deft> ", send: CTRL_D },
          { expect: "bye" },
        ], { cwd: home.path, env, timeoutSeconds: 120 });
        const out = plain(run.output);
        assert.equal(run.failed, null, out);
        assert.equal(run.code, 0, out);
        assert.match(out, /in \/testbed, approval: commands/);
        const id = /started container (\S+) from/.exec(out)?.[1];
        assert.ok(id, out);
        // The listing came from inside the image.
        const said = JSON.stringify(mock.requests.at(-1)?.body);
        assert.ok(said.includes("calc.py"), said);
        assert.equal(await containerExists(rt, id), false, "the container outlived the session");
      } finally {
        await mock.close();
      }
    });

    await t.step("SIGTERM ends the session and removes the container", async () => {
      const mock = MockLLM.start([]);
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...deftFlags(),
          `${REPO_ROOT}main.ts`,
          "interactive",
          ...modelArgs(mock),
          ...flags,
          "--approval",
          "never",
        ],
        env: { NO_COLOR: "1", ...env },
        stdin: "piped",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      try {
        let stderr = "";
        const decoder = new TextDecoder();
        const reader = child.stderr.getReader();
        let id: string | undefined;
        while (!(id = /started container (\S+) from/.exec(stderr)?.[1]) || !/\/help/.test(stderr)) {
          const { value, done } = await reader.read();
          if (done) break;
          stderr += decoder.decode(value);
        }
        assert.ok(id, stderr);
        assert.ok(await containerExists(rt, id));
        child.kill("SIGTERM");
        const drain = (async () => {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            stderr += decoder.decode(value);
          }
        })();
        const status = await child.status;
        await drain;
        // Deft ended itself (tools closed, container removed), not killed by the signal.
        assert.equal(status.signal, null, stderr);
        assert.equal(status.code, 143, stderr);
        assert.ok(
          await eventually(async () => !(await containerExists(rt, id))),
          `the container ${id} outlived SIGTERM`,
        );
      } finally {
        await child.stdin.close().catch(() => {});
        try {
          child.kill("SIGKILL");
        } catch {
          // Ended.
        }
        await child.status;
        await mock.close();
      }
    });

    await t.step(
      "container.keep: true in the user's config keeps the session's container",
      async () => {
        const config = `${home.path}/.config/deft/config.yaml`;
        await Deno.mkdir(`${home.path}/.config/deft`, { recursive: true });
        await Deno.writeTextFile(config, "container:\n  keep: true\n");
        const mock = MockLLM.start([]);
        let id: string | undefined;
        try {
          const run = await runDeftInPty(["interactive", ...modelArgs(mock), ...flags], [
            { expect: "deft> ", send: CTRL_D },
            { expect: "bye" },
          ], { cwd: home.path, env, timeoutSeconds: 120 });
          const out = plain(run.output);
          assert.equal(run.failed, null, out);
          assert.equal(run.code, 0, out);
          id = /container kept: (\S+)/.exec(out)?.[1];
          assert.ok(id, out);
          assert.ok(await containerExists(rt, id), "the kept container was removed");
        } finally {
          await mock.close();
          await Deno.remove(config);
          if (id) await rt.cli("rm", "-f", ...(rt.name === "podman" ? ["-t", "0"] : []), id);
        }
      },
    );
  });
}
