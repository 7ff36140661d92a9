/**
 * With the workspace at $HOME (`deft -w ~`), the model's sandboxed shell and editors may write
 * the project but not what the host runs next on its own: the shell's start-up files, ~/.ssh,
 * git's user config (src/policy/home_places.ts).
 *
 * Promises, each with the test that guards it:
 * - the shell cannot append to ~/.bashrc, make ~/.bash_profile, or write ~/.ssh/authorized_keys
 *   or ~/.gitconfig, and a login still reads ~/.profile: "workspace at $HOME: the shell writes
 *   the project, never …"
 * - the editor refuses the same files and Deft's config folder: "workspace at $HOME: the editor
 *   cannot create …"
 * - Debian's and Ubuntu's own start-up places, ~/.bash_aliases (read by their ~/.bashrc) and
 *   ~/bin (put on PATH by their ~/.profile), cannot be made or written either: "workspace at
 *   $HOME: ~/.bash_aliases and ~/bin …"
 * - a zsh user's ~/.zshrc and ~/.zshenv cannot be made even before they have any zsh file (their
 *   $SHELL says zsh): "workspace at $HOME: a zsh user without zsh files …"
 * - a start-up file with another hard link in the workspace is refused at the start, naming it,
 *   since the model could write it through that other name: "workspace at $HOME: a start-up file
 *   hard-linked …"
 * - a second name inside the same covered folder is covered with it (Deno from npm has two), a
 *   name outside refused: "workspace at $HOME: a file's second name inside the same covered …"
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

async function tool(home: string, name: string, args: unknown, env: Record<string, string> = {}) {
  const r = await runDeft(
    ["tool", name, JSON.stringify(args), "-w", home, "--sandbox", "workspace-write"],
    { cwd: home, env: { HOME: home, ...env } },
  );
  return { ...r, result: JSON.parse(r.stdout) };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("workspace at $HOME: the shell writes the project, never the start-up files, ~/.ssh or git's config", async () => {
  await using temp = await tempDir("deft-home-files-");
  const home = temp.path;
  await Deno.writeTextFile(join(home, ".bashrc"), "# mine\n");
  await Deno.writeTextFile(join(home, ".profile"), "echo FROM-PROFILE\n");
  const script = [
    "echo evil >> ~/.bashrc 2>/dev/null && echo WROTE-BASHRC",
    "echo evil > ~/.bash_profile 2>/dev/null && echo WROTE-BASH-PROFILE",
    "mkdir -p ~/.ssh 2>/dev/null; echo key >> ~/.ssh/authorized_keys 2>/dev/null && echo WROTE-SSH",
    "echo '[core]' >> ~/.gitconfig 2>/dev/null && echo WROTE-GITCONFIG",
    "mv ~/.bashrc ~/.bashrc-moved 2>/dev/null && echo MOVED-BASHRC",
    "echo mine > ~/project.txt && echo WROTE-PROJECT",
  ].join("\n");
  const { result } = await tool(home, "bash", { command: script });
  const out = result.output as string;
  assert.match(out, /WROTE-PROJECT/, JSON.stringify(result));
  for (
    const word of [
      "WROTE-BASHRC",
      "WROTE-BASH-PROFILE",
      "WROTE-SSH",
      "WROTE-GITCONFIG",
      "MOVED-BASHRC",
    ]
  ) assert.doesNotMatch(out, new RegExp(word), `${word}: ${out}`);
  assert.equal(await Deno.readTextFile(join(home, ".bashrc")), "# mine\n");
  assert.equal(await exists(join(home, ".ssh", "authorized_keys")), false);
  assert.doesNotMatch(await Deno.readTextFile(join(home, ".gitconfig")), /core/);
  // The ~/.bash_profile Deft made so that it could be covered keeps bash's login as it was.
  const login = await new Deno.Command("bash", {
    args: ["-l", "-c", "true"],
    env: { HOME: home },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.match(new TextDecoder().decode(login.stdout), /^FROM-PROFILE$/m);
});

Deno.test("workspace at $HOME: the editor cannot create ~/.ssh/authorized_keys, ~/.gitconfig or Deft's hooks", async () => {
  await using temp = await tempDir("deft-home-files-");
  const home = temp.path;
  for (
    const path of [
      join(home, ".ssh", "authorized_keys"),
      join(home, ".gitconfig"),
      join(home, ".config", "deft", "config.yaml"),
    ]
  ) {
    const { result } = await tool(home, "str_replace_based_edit_tool", {
      command: "create",
      path,
      file_text: "hooks: {}\n",
    });
    assert.equal(result.success, false, `${path}: ${JSON.stringify(result)}`);
    // Deft made an empty ~/.gitconfig to cover it: "create" finds it there.
    assert.match(result.error, /Deft keeps .* read-only|File already exists at/, path);
    const text = await Deno.readTextFile(path).catch(() => "");
    assert.equal(text, "", path);
  }
  const { result: edited } = await tool(home, "str_replace_based_edit_tool", {
    command: "insert",
    path: join(home, ".gitconfig"),
    insert_line: 0,
    new_str: "[core]\n",
  });
  assert.equal(edited.success, false, JSON.stringify(edited));
  assert.match(edited.error, /is your git config\. Deft keeps it read-only/);
  assert.equal(await Deno.readTextFile(join(home, ".gitconfig")), "");
  const { result } = await tool(home, "str_replace_based_edit_tool", {
    command: "create",
    path: join(home, "notes.md"),
    file_text: "mine\n",
  });
  assert.equal(result.success, true, JSON.stringify(result));
});

Deno.test("workspace at $HOME: ~/.bash_aliases and ~/bin (read by Debian's .bashrc and .profile) cannot be made", async () => {
  await using temp = await tempDir("deft-home-files-");
  const home = temp.path;
  const script = [
    "echo 'echo ALIASES-RAN' > ~/.bash_aliases 2>/dev/null && echo WROTE-ALIASES",
    "mkdir -p ~/bin 2>/dev/null; printf '#!/bin/sh\\necho BIN-RAN\\n' > ~/bin/ls 2>/dev/null && echo WROTE-BIN",
    "echo mine > ~/project.txt && echo WROTE-PROJECT",
  ].join("\n");
  const { result } = await tool(home, "bash", { command: script });
  const out = result.output as string;
  assert.match(out, /WROTE-PROJECT/, JSON.stringify(result));
  assert.doesNotMatch(out, /WROTE-ALIASES/, out);
  assert.doesNotMatch(out, /WROTE-BIN/, out);
  assert.equal(await Deno.readTextFile(join(home, ".bash_aliases")).catch(() => ""), "");
  assert.equal(await exists(join(home, "bin", "ls")), false);
});

Deno.test("workspace at $HOME: a start-up file hard-linked elsewhere in the workspace is refused at the start, naming it", async () => {
  await using temp = await tempDir("deft-home-files-");
  const home = temp.path;
  await Deno.mkdir(join(home, "dotfiles"));
  await Deno.writeTextFile(join(home, "dotfiles", "bashrc"), "# mine\n");
  await Deno.link(join(home, "dotfiles", "bashrc"), join(home, ".bashrc"));
  const { result } = await tool(home, "bash", {
    command: "echo evil >> ~/dotfiles/bashrc && echo WROTE-LINK",
  });
  assert.equal(await Deno.readTextFile(join(home, ".bashrc")), "# mine\n", "~/.bashrc unchanged");
  assert.equal(result.success, false, JSON.stringify(result));
  assert.match(result.error, /\.bashrc.*hard link/s, JSON.stringify(result));
});

Deno.test("workspace at $HOME: a file's second name inside the same covered folder is covered with it; one outside is refused", async () => {
  await using temp = await tempDir("deft-home-files-");
  const home = temp.path;
  // Both names under ~/.ssh (npm installs Deno under two names in its package folder the same
  // way): the whole folder is shown read-only, so neither name can be written.
  await Deno.mkdir(join(home, ".ssh", "old"), { recursive: true });
  await Deno.writeTextFile(join(home, ".ssh", "authorized_keys"), "key\n");
  await Deno.link(join(home, ".ssh", "authorized_keys"), join(home, ".ssh", "old", "keys"));
  const inside = await tool(home, "bash", {
    command: "echo evil >> ~/.ssh/old/keys 2>/dev/null && echo WROTE-LINK; echo RAN",
  });
  assert.equal(inside.result.success, true, JSON.stringify(inside.result));
  assert.match(inside.result.output, /RAN/);
  assert.doesNotMatch(inside.result.output, /WROTE-LINK/);
  assert.equal(await Deno.readTextFile(join(home, ".ssh", "authorized_keys")), "key\n");
  // A third name outside ~/.ssh: refused at the start, naming the file.
  await Deno.link(join(home, ".ssh", "authorized_keys"), join(home, "keys-copy"));
  const outside = await tool(home, "bash", { command: "echo evil >> ~/keys-copy" });
  assert.equal(outside.result.success, false, JSON.stringify(outside.result));
  assert.match(outside.result.error, /authorized_keys.*hard link/s);
  assert.equal(await Deno.readTextFile(join(home, ".ssh", "authorized_keys")), "key\n");
});

Deno.test("workspace at $HOME: a zsh user without zsh files yet cannot get a ~/.zshrc or ~/.zshenv made", async () => {
  await using temp = await tempDir("deft-home-files-");
  const home = temp.path;
  const script = [
    "echo 'echo ZSHRC-RAN' > ~/.zshrc 2>/dev/null && echo WROTE-ZSHRC",
    "echo 'echo ZSHENV-RAN' > ~/.zshenv 2>/dev/null && echo WROTE-ZSHENV",
    "echo mine > ~/project.txt && echo WROTE-PROJECT",
  ].join("\n");
  const { result } = await tool(home, "bash", { command: script }, { SHELL: "/usr/bin/zsh" });
  const out = result.output as string;
  assert.match(out, /WROTE-PROJECT/, JSON.stringify(result));
  assert.doesNotMatch(out, /WROTE-ZSHRC|WROTE-ZSHENV/, out);
  for (const name of [".zshrc", ".zshenv"]) {
    assert.equal(await Deno.readTextFile(join(home, name)).catch(() => ""), "", name);
  }
});
