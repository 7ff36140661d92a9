/**
 * Background shells through `deft serve` (the tool calls of a front end that is not the agent),
 * and nothing of them outlives Deft: a background HTTP server and the processes it started are
 * gone, and its port is free, after the end of input, SIGINT (Ctrl-C), SIGTERM, SIGHUP and
 * SIGKILL of Deft itself.
 */
import assert from "node:assert/strict";
import { deftFlags } from "../../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT } from "../../../helpers/deft.ts";
import { eventually, pidsByCmdline } from "../../../helpers/bash.ts";
import { tempDir } from "../../../helpers/temp.ts";

const ENDINGS = ["end of input", "SIGINT", "SIGTERM", "SIGHUP", "SIGKILL"] as const;

async function listensOnHost(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch {
    return false;
  }
}

// Without a sandbox the server is on the host's loopback, where the test checks its port; with
// one (serve's default), on the sandbox's own, which the session's shell reaches while it lives.
const SANDBOXES = ["none", "workspace-write"] as const;

for (const sandbox of SANDBOXES) {
  for (const ending of ENDINGS) {
    Deno.test(`background via deft serve (sandbox ${sandbox}): read, then nothing survives ${ending}`, async () => {
      const unique = `${crypto.getRandomValues(new Uint32Array(1))[0]}`;
      await using workspaceDir = await tempDir("deft-bg-serve-");
      const workspace = workspaceDir.path;
      const site = `${workspace}/site-${unique}`;
      await Deno.mkdir(site);
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...deftFlags(),
          `${REPO_ROOT}main.ts`,
          "serve",
          "-w",
          workspace,
          "--sandbox",
          sandbox,
        ],
        env: { NO_COLOR: "1", DENO_DIR: denoDir() },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = "";
      let next = 1;
      const call = async (name: string, args: Record<string, unknown>) => {
        const id = next++;
        const line = JSON.stringify({ id, name, arguments: args }) + "\n";
        await writer.write(new TextEncoder().encode(line));
        while (!buffered.includes("\n")) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`deft serve ended: ${buffered}`);
          buffered += value;
        }
        const at = buffered.indexOf("\n");
        const reply = JSON.parse(buffered.slice(0, at));
        buffered = buffered.slice(at + 1);
        assert.equal(reply.id, id);
        return reply as { output: string | null; error: string | null; error_code: number };
      };
      try {
        const started = await call("bash", {
          command: `setsid env -i sleep 904.${unique} >/dev/null 2>&1 & ` +
            `exec python3 -u -m http.server 0 --bind 127.0.0.1 --directory ${site}`,
          run_in_background: true,
        });
        assert.equal(started.error_code, 0, JSON.stringify(started));
        const shellId = /shell_id: (bg-[0-9a-f]+)/.exec(started.output!)![1];
        let seen = "";
        assert.ok(
          await eventually(async () => {
            const r = await call("bash_output", { shell_id: shellId });
            assert.equal(r.error_code, 0, JSON.stringify(r));
            seen += r.output;
            return /port \d+/.test(seen);
          }, 20_000),
          seen,
        );
        const port = Number(/port (\d+)/.exec(seen)![1]);
        const probe = await call("bash", {
          command: `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo open || echo closed`,
        });
        assert.equal(probe.output, "open\n", "the session's shell reaches the server");
        if (sandbox === "none") assert.ok(await listensOnHost(port));
        assert.equal((await pidsByCmdline(unique)).length, 2, "the server and the sleep run");

        if (ending === "end of input") await writer.close();
        else child.kill(ending);
        const status = await child.status;
        if (ending === "end of input") assert.equal(status.code, 0);

        assert.ok(
          await eventually(async () => (await pidsByCmdline(unique)).length === 0, 10_000),
          `left behind: ${await pidsByCmdline(unique)}`,
        );
        // A killed process leaves /proc's command lines a moment before it closes its sockets.
        if (sandbox === "none") {
          assert.ok(await eventually(async () => !(await listensOnHost(port))), "port free");
        }
      } finally {
        await writer.close().catch(() => {});
        try {
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
        await child.status;
        await reader.cancel().catch(() => {});
        await child.stderr.cancel().catch(() => {});
      }
    });
  }
}
