/**
 * Start-up pays only for what the command uses (issue 39, item 1): once bubblewrap has started on
 * this machine, `--help`, `--version`, `tools`, `config`, `sessions` and `task_done` start no
 * bwrap at all; a bwrap that cannot start is never remembered as working.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A bwrap that logs each start to `log`, then runs `real` (or fails, with `real` undefined). */
async function loggingBwrap(bin: string, log: string, real: string | undefined): Promise<void> {
  await Deno.mkdir(bin, { recursive: true });
  const run = real ? `exec "${real}" "$@"` : "exit 1";
  await Deno.writeTextFile(join(bin, "bwrap"), `#!/bin/sh\necho started >> "${log}"\n${run}\n`);
  await Deno.chmod(join(bin, "bwrap"), 0o755);
}

async function starts(log: string): Promise<number> {
  try {
    return (await Deno.readTextFile(log)).split("\n").filter((l) => l !== "").length;
  } catch {
    return 0;
  }
}

const REAL_BWRAP = "/usr/bin/bwrap";

Deno.test("a bwrap that started once is not probed again: the light commands start none", async () => {
  await using home = await tempDir("deft-probe-");
  const log = join(home.path, "bwrap.log");
  const bin = join(home.path, "bin");
  await loggingBwrap(bin, log, REAL_BWRAP);
  const env = { HOME: home.path, PATH: `${bin}:${Deno.env.get("PATH")}` };
  const first = await runDeft(["tools"], { env, cwd: home.path });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(await starts(log), 1, "the first start on this machine probes");
  const light = [
    ["--help"],
    ["--version"],
    ["tools"],
    ["config"],
    ["sessions"],
    ["tool", "task_done", "{}"],
  ];
  for (const args of light) {
    const run = await runDeft(args, { env, cwd: home.path });
    assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
    assert.equal(await starts(log), 1, `deft ${args.join(" ")} started bwrap`);
  }
  // The sandbox is still there: the shell runs in it, and cannot write outside the workspace.
  const outside = `/var/tmp/deft-probe-${crypto.randomUUID()}`;
  try {
    const bash = await runDeft(
      ["tool", "bash", JSON.stringify({ command: `touch ${outside} 2>/dev/null; echo in` })],
      { env, cwd: home.path },
    );
    assert.equal(bash.code, 0, bash.stdout + bash.stderr);
    assert.equal(bash.stderr, "", "no notice: the default sandbox is on");
    await assert.rejects(Deno.stat(outside), Deno.errors.NotFound, "the shell was not sandboxed");
  } finally {
    await Deno.remove(outside).catch(() => {});
  }
});

Deno.test("a bwrap that cannot start is probed at every start and never remembered", async () => {
  await using home = await tempDir("deft-probe-");
  const log = join(home.path, "bwrap.log");
  const bin = join(home.path, "bin");
  await loggingBwrap(bin, log, undefined);
  const env = { HOME: home.path, PATH: `${bin}:${Deno.env.get("PATH")}` };
  for (const round of [1, 2]) {
    const run = await runDeft(["tool", "task_done", "{}"], { env, cwd: home.path });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /cannot start here, so the model's commands .* run unsandboxed/);
    assert.equal(await starts(log), round, "probed again");
  }
});
