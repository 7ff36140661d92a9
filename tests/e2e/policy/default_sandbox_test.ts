/**
 * Safe by default: with no flag, no DEFT_SANDBOX and no config, the model's shell runs in the
 * workspace-write sandbox wherever bubblewrap works; where it is missing, one line on stderr says
 * what is unprotected and the call still runs; a sandbox asked for by name still fails at start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

/** A PATH folder holding every program of the usual ones except bwrap. */
async function pathWithoutBwrap(): Promise<string> {
  const bin = await tempDirUntilExit("deft-nobwrap-");
  for (const dir of ["/usr/local/bin", "/usr/bin", "/bin"]) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      continue; // not on this system
    }
    for (const entry of entries) {
      if (entry.name === "bwrap") continue;
      await Deno.symlink(join(dir, entry.name), join(bin, entry.name)).catch(() => {});
    }
  }
  return bin;
}

async function freshWorkspace(): Promise<string> {
  return await tempDirUntilExit("deft-default-");
}

const escapeName = () => `/var/tmp/deft-default-${crypto.randomUUID()}`;

Deno.test("no flags, no config: the shell cannot write outside the workspace", async () => {
  const workspace = await freshWorkspace();
  const target = escapeName();
  try {
    const run = await runDeft(
      ["tool", "bash", JSON.stringify({ command: `touch ${target}; touch inside` })],
      { cwd: workspace, env: { HOME: workspace } },
    );
    assert.equal(run.stderr, "", "no notice where bubblewrap works");
    await assert.rejects(Deno.stat(target), Deno.errors.NotFound);
    await Deno.stat(join(workspace, "inside"));
  } finally {
    await Deno.remove(target).catch(() => {});
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("without bubblewrap: one line says so, and the call runs unsandboxed", async () => {
  const workspace = await freshWorkspace();
  const bin = await pathWithoutBwrap();
  const target = escapeName();
  try {
    const run = await runDeft(
      ["tool", "bash", JSON.stringify({ command: `touch ${target}` })],
      { cwd: workspace, env: { HOME: workspace, PATH: bin } },
    );
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const lines = run.stderr.trim().split("\n");
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0], /^deft: bubblewrap is not installed, so .* run unsandboxed/);
    assert.match(lines[0], /apt-get install -y bubblewrap/);
    await Deno.stat(target);

    // Asked for by name, a sandbox that cannot start is an error at start, not a fallback.
    const asked = await runDeft(
      ["tool", "bash", JSON.stringify({ command: "true" }), "--sandbox", "workspace-write"],
      { cwd: workspace, env: { HOME: workspace, PATH: bin } },
    );
    assert.equal(asked.code, 2, asked.stdout + asked.stderr);
    assert.match(asked.stderr, /bubblewrap/);
  } finally {
    await Deno.remove(target).catch(() => {});
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(bin, { recursive: true });
  }
});
