/**
 * Nothing outlives `deft serve`, without a sandbox: processes that leave the shell's session and
 * clear their environment (`setsid env -i`), double forks and a fork bomb (held in a pids-limited
 * cgroup the test makes) are all gone after the end of input, after SIGTERM (exit 143) and after
 * SIGKILL of Deft itself.
 */
import assert from "node:assert/strict";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";
import { eventually, pidsByCmdline } from "../../helpers/bash.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A pids-limited cgroup (v2 or v1), or undefined where the test may not make one. */
async function pidsCgroup(name: string): Promise<string | undefined> {
  for (const root of ["/sys/fs/cgroup", "/sys/fs/cgroup/pids"]) {
    try {
      await Deno.stat(`${root}/cgroup.procs`);
      const dir = `${root}/${name}`;
      await Deno.mkdir(dir);
      try {
        await Deno.writeTextFile(`${dir}/pids.max`, "64");
        return dir;
      } catch {
        await Deno.remove(dir);
      }
    } catch {
      // not this one
    }
  }
  return undefined;
}

async function cgroupProcs(dir: string): Promise<string> {
  return (await Deno.readTextFile(`${dir}/cgroup.procs`)).trim();
}

const ENDINGS = ["end of input", "SIGTERM", "SIGKILL"] as const;

for (const ending of ENDINGS) {
  Deno.test(`orphans: nothing deft serve's shell started survives ${ending}`, async () => {
    const unique = `${Date.now() % 1_000_000}${Math.floor(Math.random() * 1000)}`;
    await using workspaceDir = await tempDir("deft-orphans-");
    const workspace = workspaceDir.path;
    const cgroup = await pidsCgroup(`deft-test-${unique}`);
    const lines = [
      `setsid env -i sleep 3001.${unique} </dev/null >/dev/null 2>&1 &`,
      `( ( sleep 3002.${unique} </dev/null >/dev/null 2>&1 & ) & )`,
      `nohup sleep 3003.${unique} </dev/null >/dev/null 2>&1 &`,
    ];
    if (cgroup) {
      // The bomb joins the cgroup first, so it cannot take the machine's process table.
      lines.push(
        `( echo 0 > ${cgroup}/cgroup.procs && exec bash -c ` +
          `'b() { b | b & }; b # bomb ${unique}' ) </dev/null >/dev/null 2>&1 &`,
      );
    }
    lines.push("echo started");
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...deftFlags(),
        `${REPO_ROOT}main.ts`,
        "serve",
        "-w",
        workspace,
        "--sandbox",
        "none",
      ],
      env: { NO_COLOR: "1", DENO_DIR: denoDir() },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      const call = { id: 1, name: "bash", arguments: { command: lines.join("\n") } };
      await writer.write(new TextEncoder().encode(JSON.stringify(call) + "\n"));
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += value;
      }
      const reply = JSON.parse(out.split("\n")[0]);
      assert.equal(reply.output, "started\n", JSON.stringify(reply));
      assert.ok(
        await eventually(async () => (await pidsByCmdline(`.${unique}`)).length === 3, 10_000),
        "the three sleeps started",
      );
      if (cgroup) {
        assert.ok(
          await eventually(async () => (await pidsByCmdline(`bomb ${unique}`)).length > 10),
          "the fork bomb runs",
        );
      }

      if (ending === "end of input") await writer.close();
      else child.kill(ending);
      const status = await child.status;
      if (ending === "SIGTERM") assert.equal(status.code, 143);
      if (ending === "end of input") assert.equal(status.code, 0);

      assert.ok(
        await eventually(async () => (await pidsByCmdline(unique)).length === 0, 10_000),
        `left behind: ${await pidsByCmdline(unique)}`,
      );
      if (cgroup) assert.equal(await cgroupProcs(cgroup), "", "the bomb's cgroup is empty");
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
      if (cgroup) {
        // Whatever the test failed on, leave no process and no cgroup behind: no more forks,
        // then kill what is left until the cgroup is empty.
        await Deno.writeTextFile(`${cgroup}/pids.max`, "0").catch(() => {});
        await eventually(async () => {
          const pids = (await cgroupProcs(cgroup).catch(() => "")).split("\n").filter((p) => p);
          if (pids.length > 0) await new Deno.Command("kill", { args: ["-9", ...pids] }).output();
          return pids.length === 0;
        });
        await Deno.remove(cgroup).catch(() => {});
      }
    }
  });
}
