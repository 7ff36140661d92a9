/**
 * Start-up pays only for what the command uses (issue 39, item 1): `--help`, `--version`, `tools`,
 * `sessions` and `task_done` start no bwrap at all, even on a fresh machine (the default sandbox is
 * decided when a tool first needs it); once bubblewrap has started on this machine, `config` starts
 * none either; a bwrap that cannot start is never remembered as working.
 *
 * Promises of the probe memory, each with the test that guards it (here unless a file is named):
 * - a bwrap that started once is not probed again: "a bwrap that started once is not probed …"
 * - the light commands start none, even with an empty cache; the first sandboxed tool probes:
 *   "with an empty cache the light commands start no bwrap …"
 * - a bwrap that cannot start is probed at every start and never remembered: "a bwrap that cannot
 *   start is probed at every start and never remembered"
 * - a bwrap replaced in place (same path and inode, even the same size) is probed again:
 *   probe_replaced_test.ts "probe memory: a bwrap replaced in place …" (rewritten in a later
 *   second: the change time, which Deno gives in whole seconds, and the modification time differ).
 * - not guarded: a same-size rewrite within the same second as the last change, told apart only by
 *   the modification time (to the millisecond); a test cannot rewrite the file after Deft has
 *   remembered it and still within the second it was written.
 * - not guarded: the rest of the key (kernel release, boot, user, host name, container marks),
 *   which a test cannot change.
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
  // The first tool that needs the sandbox on this machine probes (and then starts its own bwrap).
  const first = await runDeft(["tool", "bash", '{"command": "true"}'], { env, cwd: home.path });
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const probed = await starts(log);
  assert.ok(probed >= 1, "the first sandboxed start on this machine probes");
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
    assert.equal(await starts(log), probed, `deft ${args.join(" ")} started bwrap`);
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

Deno.test("with an empty cache the light commands start no bwrap; the first sandboxed tool does", async () => {
  await using home = await tempDir("deft-probe-");
  const log = join(home.path, "bwrap.log");
  const bin = join(home.path, "bin");
  await loggingBwrap(bin, log, REAL_BWRAP);
  const cache = join(home.path, "cache");
  const env = { HOME: home.path, DEFT_CACHE_DIR: cache, PATH: `${bin}:${Deno.env.get("PATH")}` };
  // `deft config` is left out: it prints the sandbox it would use, which takes the probe.
  const light = [
    ["tool", "task_done", "{}"],
    ["tool", "sequentialthinking", JSON.stringify(THOUGHT)],
    ["tools"],
    ["tools", "--json"],
    ["--help"],
    ["--version"],
    ["sessions"],
  ];
  for (const args of light) {
    const run = await runDeft(args, { env, cwd: home.path });
    assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
    assert.doesNotMatch(run.stderr, /bubblewrap|bwrap|sandbox/, `deft ${args.join(" ")}`);
    assert.equal(await starts(log), 0, `deft ${args.join(" ")} started bwrap`);
    await assert.rejects(
      Deno.stat(join(cache, "sandbox-probe.json")),
      Deno.errors.NotFound,
      `deft ${args.join(" ")} remembered a probe it never ran`,
    );
  }
  // The first tool that needs the sandbox decides it, and gets it.
  await Deno.writeTextFile(join(home.path, "note.txt"), "kept\n");
  const view = await runDeft(
    [
      "tool",
      "str_replace_based_edit_tool",
      JSON.stringify({ command: "view", path: join(home.path, "note.txt") }),
    ],
    { env, cwd: home.path },
  );
  assert.equal(view.code, 0, view.stdout + view.stderr);
  assert.match(view.stdout, /kept/);
  assert.ok(await starts(log) >= 2, "the probe, then the sandboxed host");
});

/** A valid call of the sequential-thinking tool (in-process, like task_done). */
const THOUGHT = { thought: "t", thought_number: 1, total_thoughts: 1, next_thought_needed: false };

Deno.test("a bwrap that cannot start is probed at every start and never remembered", async () => {
  await using home = await tempDir("deft-probe-");
  const log = join(home.path, "bwrap.log");
  const bin = join(home.path, "bin");
  await loggingBwrap(bin, log, undefined);
  const env = { HOME: home.path, PATH: `${bin}:${Deno.env.get("PATH")}` };
  // A tool that runs in this process needs no sandbox: nothing is probed, nothing is said.
  const done = await runDeft(["tool", "task_done", "{}"], { env, cwd: home.path });
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.stderr, "");
  assert.equal(await starts(log), 0, "task_done probed");
  // The shell needs it: probed at each start, the notice given, and the shell runs without.
  let before = 0;
  for (const _round of [1, 2]) {
    const run = await runDeft(["tool", "bash", '{"command": "echo ran"}'], {
      env,
      cwd: home.path,
    });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /ran/);
    assert.match(run.stderr, /cannot start here, so the model's commands .* run unsandboxed/);
    const now = await starts(log);
    assert.ok(now > before, "probed again");
    before = now;
  }
});
