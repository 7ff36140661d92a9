/**
 * With the workspace at $HOME (`deft -w ~`), the model's sandboxed shell may write the workspace
 * but never what the next Deft runs on the host: the user's config (hooks, MCP servers, trusted
 * folders), Deft's state and cache. The folders that hold them are read-only inside, and cannot be
 * renamed away and made again.
 *
 * Promises of the control folders, each with the test that guards it (here unless a file is named):
 * - with the workspace at $HOME, the model's shell writes the project, never Deft's config, state
 *   or cache, nor renames them away: "workspace at $HOME: the model's shell writes the project …"
 * - Deno's cache at its default place under that $HOME is read-only to the shell:
 *   control_dirs_deno_test.ts "workspace at $HOME, DENO_DIR unset: Deno's cache …"
 * - a control folder reached through a link is refused, saying what to do: "workspace at $HOME
 *   with ~/.config a link …"
 * - a writable sandbox whose workspace is, or lies in, a control folder is refused at start, also
 *   through a link and by each writing view: control_workspace_test.ts "workspace is …: refused at
 *   start, nothing written", "config home reached through a link …", "each writing view refuses
 *   …", "deft run in its config folder …: refused before the model is asked"
 * - a workspace holding the config folder (-w ~/.config): neither the shell nor the editor changes
 *   it: control_workspace_test.ts "workspace holds the config folder …"; a read-only sandbox there
 *   may look: "read-only sandbox in the config folder: the model may look"
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

function homeEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
  };
}

async function bash(home: string, command: string) {
  return await runDeft(
    ["tool", "bash", JSON.stringify({ command }), "--sandbox", "workspace-write"],
    { cwd: home, env: homeEnv(home) },
  );
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("workspace at $HOME: the model's shell writes the project, never Deft's config, state or cache", async () => {
  await using temp = await tempDir("deft-ctl-");
  const home = temp.path;
  const script = [
    "mkdir -p .config/deft 2>/dev/null; echo 'hooks: {}' > .config/deft/config.yaml 2>/dev/null && echo WROTE-CONFIG",
    "mv .config .config-moved 2>/dev/null && echo MOVED-CONFIG",
    "rm -rf .config 2>/dev/null; [ -d .config ] || echo REMOVED-CONFIG",
    "mkdir -p .local/state/deft 2>/dev/null && echo x > .local/state/deft/evil 2>/dev/null && echo WROTE-STATE",
    "mkdir -p .cache/deft 2>/dev/null && echo '{}' > .cache/deft/sandbox-probe.json 2>/dev/null && echo WROTE-CACHE",
    "echo mine > project.txt && echo WROTE-PROJECT",
  ].join("\n");
  const r = await bash(home, script);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout).output as string;
  assert.match(out, /WROTE-PROJECT/);
  for (
    const word of ["WROTE-CONFIG", "MOVED-CONFIG", "REMOVED-CONFIG", "WROTE-STATE", "WROTE-CACHE"]
  ) {
    assert.doesNotMatch(out, new RegExp(word), `${word}: ${out}`);
  }
  assert.equal(await Deno.readTextFile(join(home, "project.txt")), "mine\n");
  assert.equal(await exists(join(home, ".config", "deft", "config.yaml")), false);
  assert.equal(await exists(join(home, ".config-moved")), false);
  assert.equal(await exists(join(home, ".local", "state", "deft", "evil")), false);
  assert.equal(await exists(join(home, ".cache", "deft", "sandbox-probe.json")), false);
});

Deno.test("workspace at $HOME with ~/.config a link: the shell is refused, saying what to do", async () => {
  await using temp = await tempDir("deft-ctl-");
  await using elsewhere = await tempDir("deft-ctl-dotfiles-");
  const home = temp.path;
  await Deno.symlink(elsewhere.path, join(home, ".config"));
  const r = await bash(home, "echo 'hooks: {}' > .config/evil.yaml; echo RAN");
  const out = r.stdout + r.stderr;
  assert.doesNotMatch(JSON.parse(r.stdout).output ?? "", /RAN/);
  assert.match(out, /holds \S+\/\.config \(.*where Deft or your shell finds what it runs next/);
  assert.match(out, /-w DIR/);
  assert.equal(await exists(join(elsewhere.path, "evil.yaml")), false);
});
