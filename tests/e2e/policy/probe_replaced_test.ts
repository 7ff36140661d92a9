/**
 * The probe memory (src/policy/default_sandbox.ts, `probeMemory`) remembers a bwrap that started, keyed
 * by the program's path, device, inode, size and change time among others. A bwrap replaced in
 * place — same path, same inode, even the same size, only its change time new — is probed again:
 * a remembered "it works" about the old program never vouches for the new one. (Deno reports the
 * change time in whole seconds, so the test rewrites the file in a later second than its last
 * change; within one second only the modification time, kept to the millisecond, tells them apart,
 * which no test can arrange after Deft has remembered the file.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

const REAL_BWRAP = "/usr/bin/bwrap";

/** Two scripts of the same length: one logs and runs the real bwrap, one logs and fails. */
function scripts(log: string): { working: string; broken: string } {
  const working = `#!/bin/sh\necho started >> "${log}"\nexec "${REAL_BWRAP}" "$@"\n`;
  let broken = `#!/bin/sh\necho started >> "${log}"\nexit 1\n`;
  broken = broken.slice(0, -1) + "#".repeat(working.length - broken.length) + "\n";
  assert.equal(broken.length, working.length);
  return { working, broken };
}

async function starts(log: string): Promise<number> {
  const text = await Deno.readTextFile(log).catch(() => "");
  return text.split("\n").filter((l) => l !== "").length;
}

Deno.test("probe memory: a bwrap replaced in place (same path, inode and size) is probed again", async () => {
  await using home = await tempDir("deft-probe-replaced-");
  const bin = join(home.path, "bin");
  const log = join(home.path, "bwrap.log");
  const bwrap = join(bin, "bwrap");
  await Deno.mkdir(bin);
  const { working, broken } = scripts(log);
  await Deno.writeTextFile(bwrap, working);
  await Deno.chmod(bwrap, 0o755);
  const env = { HOME: home.path, PATH: `${bin}:${Deno.env.get("PATH")}` };

  const first = await runDeft(["config"], { env, cwd: home.path });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^sandbox: workspace-write$/m);
  assert.ok(await starts(log) >= 1, "the first start probed");
  // Remembered: a second start probes nothing.
  const before = await starts(log);
  const again = await runDeft(["config"], { env, cwd: home.path });
  assert.match(again.stdout, /^sandbox: workspace-write$/m);
  assert.equal(await starts(log), before, "a remembered bwrap was probed again");

  // The same file rewritten (as an upgrade in place would): same inode, same size, new ctime.
  const old = await Deno.stat(bwrap);
  // Deno gives the change time in whole seconds: rewrite it in a later second than the last.
  const wait = (old.ctime?.getTime() ?? 0) + 1_100 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  await Deno.writeTextFile(bwrap, broken);
  const now = await Deno.stat(bwrap);
  assert.equal(now.ino, old.ino, "not replaced in place");
  assert.equal(now.size, old.size);
  assert.notEqual(now.ctime?.getTime(), old.ctime?.getTime());

  const after = await runDeft(["config"], { env, cwd: home.path });
  assert.equal(after.code, 0, after.stderr);
  assert.ok(await starts(log) > before, "the replaced bwrap was not probed");
  assert.match(after.stdout, /^sandbox: none$/m, "the old answer was trusted for the new bwrap");
  assert.match(after.stderr, /cannot start here, so the model's commands .* run unsandboxed/);
});
