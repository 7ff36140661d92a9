/**
 * In a writable sandbox the model may use git in the workspace's repository, but not write what
 * git on the host runs: `.git/hooks` (the user's next commit runs them) and `.git/config` (an
 * editor's `git status` runs its `core.fsmonitor`) (src/policy/repo_places.ts).
 *
 * Promises, each with the test that guards it:
 * - the shell cannot plant a hook, set `core.fsmonitor`, replace the config by rename or move
 *   `.git` away, while `git commit -c user.name=…`, `checkout -b` and `stash` still work:
 *   "workspace repository: the shell commits, …"
 * - a missing hooks folder is made (0755) and covered: "workspace repository: a missing hooks …"
 * - the editor refuses the hooks and the config with the policy's wording: "workspace
 *   repository: the editor …"
 * - a `.git/config` that is a link refuses the sandbox, naming it: "workspace repository: a
 *   linked .git/config …"
 * - a `.git` file (`--separate-git-dir`) cannot be pointed elsewhere, and the hooks and config
 *   of the folder it names inside the workspace are covered: "workspace repository: a .git file …"
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

async function tool(home: string, ws: string, name: string, args: unknown) {
  const r = await runDeft(
    ["tool", name, JSON.stringify(args), "-w", ws, "--sandbox", "workspace-write"],
    { cwd: ws, env: { HOME: home } },
  );
  return { ...r, result: JSON.parse(r.stdout) };
}

async function git(home: string, cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
    cwd,
    env: { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

async function repo(prefix: string) {
  const temp = await tempDir(prefix);
  const home = join(temp.path, "home");
  const ws = join(temp.path, "ws");
  await Deno.mkdir(home);
  await Deno.mkdir(ws);
  await git(home, ws, "init", "-q");
  await Deno.writeTextFile(join(ws, "a.txt"), "a\n");
  await git(home, ws, "add", "a.txt");
  await git(home, ws, "commit", "-q", "-m", "first");
  return { temp, home, ws };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("workspace repository: the shell commits, branches and stashes, but plants no hook and sets no fsmonitor", async () => {
  const { temp, home, ws } = await repo("deft-repo-files-");
  await using _ = temp;
  const config = await Deno.readTextFile(join(ws, ".git", "config"));
  const script = [
    "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit 2>/dev/null && echo WROTE-HOOK",
    "git config core.fsmonitor 'touch /tmp/pwned' 2>/dev/null && echo SET-FSMONITOR",
    "cp .git/config /tmp/c && echo '[core] fsmonitor = x' >> /tmp/c && cp /tmp/c .git/c2 &&" +
    " mv -f .git/c2 .git/config 2>/dev/null && echo RENAMED-CONFIG",
    "rm -f .git/c2",
    "mv .git .git-old 2>/dev/null && echo MOVED-GIT",
    "echo b > b.txt && git add b.txt &&" +
    " git -c user.name=a -c user.email=b@c commit -q -m second && echo COMMITTED",
    "git checkout -q -b topic && echo BRANCHED",
    "echo c >> a.txt && git -c user.name=a -c user.email=b@c stash -q && echo STASHED",
    "GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=b@c GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=b@c" +
    " git commit -q --allow-empty -m third && echo ENV-COMMITTED",
  ].join("\n");
  const { result } = await tool(home, ws, "bash", { command: script });
  const out = result.output as string;
  for (const word of ["COMMITTED", "BRANCHED", "STASHED", "ENV-COMMITTED"]) {
    assert.match(out, new RegExp(`^${word}$`, "m"), `${word}: ${JSON.stringify(result)}`);
  }
  for (const word of ["WROTE-HOOK", "SET-FSMONITOR", "RENAMED-CONFIG", "MOVED-GIT"]) {
    assert.doesNotMatch(out, new RegExp(word), `${word}: ${out}`);
  }
  assert.equal(await exists(join(ws, ".git", "hooks", "pre-commit")), false);
  assert.equal(await Deno.readTextFile(join(ws, ".git", "config")), config);
  assert.match(await git(home, ws, "log", "--format=%s", "topic"), /^third\nsecond\nfirst\n$/);
  assert.match(await git(home, ws, "stash", "list"), /stash@\{0\}/);
});

Deno.test("workspace repository: a missing hooks folder is made (0755) and covered", async () => {
  const { temp, home, ws } = await repo("deft-repo-files-");
  await using _ = temp;
  await Deno.remove(join(ws, ".git", "hooks"), { recursive: true });
  const { result } = await tool(home, ws, "bash", {
    command: "echo x > .git/hooks/post-checkout 2>/dev/null && echo WROTE-HOOK; echo DONE",
  });
  assert.match(result.output, /DONE/, JSON.stringify(result));
  assert.doesNotMatch(result.output, /WROTE-HOOK/);
  const info = await Deno.lstat(join(ws, ".git", "hooks"));
  assert.equal(info.isDirectory, true);
  assert.equal(info.mode! & 0o777 & ~0o022, 0o755 & ~0o022);
  assert.deepEqual([...Deno.readDirSync(join(ws, ".git", "hooks"))], []);
});

Deno.test("workspace repository: the editor refuses .git/config and .git/hooks with the reason", async () => {
  const { temp, home, ws } = await repo("deft-repo-files-");
  await using _ = temp;
  const config = await Deno.readTextFile(join(ws, ".git", "config"));
  const { result: edited } = await tool(home, ws, "str_replace_based_edit_tool", {
    command: "insert",
    path: join(ws, ".git", "config"),
    insert_line: 0,
    new_str: "[core]\n\tfsmonitor = touch /tmp/pwned\n",
  });
  assert.equal(edited.success, false, JSON.stringify(edited));
  assert.match(edited.error, /is the repository's config .*Deft keeps the workspace repository's/);
  assert.equal(await Deno.readTextFile(join(ws, ".git", "config")), config);
  const { result: hook } = await tool(home, ws, "str_replace_based_edit_tool", {
    command: "create",
    path: join(ws, ".git", "hooks", "pre-commit"),
    file_text: "#!/bin/sh\ntouch /tmp/pwned\n",
  });
  assert.equal(hook.success, false, JSON.stringify(hook));
  assert.match(hook.error, /lies in .*\.git\/hooks, the repository's hooks folder/);
  assert.equal(await exists(join(ws, ".git", "hooks", "pre-commit")), false);
  const names = [...Deno.readDirSync(join(ws, ".git"))].map((e) => e.name);
  assert.deepEqual(names.filter((n) => /deft|tmp/i.test(n)), [], "no scratch file left");
});

Deno.test("workspace repository: a linked .git/config refuses the sandbox, naming it", async () => {
  const { temp, home, ws } = await repo("deft-repo-files-");
  await using _ = temp;
  const real = join(temp.path, "config-real");
  await Deno.rename(join(ws, ".git", "config"), real);
  await Deno.symlink(real, join(ws, ".git", "config"));
  const r = await runDeft(
    [
      "tool",
      "bash",
      JSON.stringify({ command: "echo RAN" }),
      "-w",
      ws,
      "--sandbox",
      "workspace-write",
    ],
    { cwd: ws, env: { HOME: home } },
  );
  const all = r.stdout + r.stderr;
  assert.doesNotMatch(all, /^RAN$/m, all);
  assert.match(all, /\.git\/config \(the repository's config.*it is a link/s, all);
});

Deno.test("workspace repository: a .git file keeps naming its folder, whose hooks and config are covered", async () => {
  await using temp = await tempDir("deft-repo-files-");
  const home = join(temp.path, "home");
  const ws = join(temp.path, "ws");
  await Deno.mkdir(home);
  await Deno.mkdir(ws);
  // `.git` is a file naming a git folder inside the workspace (as `--separate-git-dir` makes).
  await git(home, ws, "init", "-q", "--separate-git-dir", join(ws, "store"));
  const pointer = await Deno.readTextFile(join(ws, ".git"));
  const config = await Deno.readTextFile(join(ws, "store", "config"));
  const script = [
    "mkdir -p evil/hooks && printf 'gitdir: %s\\n' \"$PWD/evil\" > .git 2>/dev/null && echo REPOINTED",
    "echo x > store/hooks/pre-commit 2>/dev/null && echo WROTE-HOOK",
    "git config core.fsmonitor x 2>/dev/null && echo SET-FSMONITOR",
    "mv store store2 2>/dev/null && echo MOVED-STORE",
    "echo b > b.txt && git add b.txt && git -c user.name=a -c user.email=b@c commit -q -m one" +
    " && echo COMMITTED",
  ].join("\n");
  const { result } = await tool(home, ws, "bash", { command: script });
  const out = result.output as string;
  assert.match(out, /^COMMITTED$/m, JSON.stringify(result));
  for (const word of ["REPOINTED", "WROTE-HOOK", "SET-FSMONITOR", "MOVED-STORE"]) {
    assert.doesNotMatch(out, new RegExp(word), `${word}: ${out}`);
  }
  assert.equal(await Deno.readTextFile(join(ws, ".git")), pointer);
  assert.equal(await Deno.readTextFile(join(ws, "store", "config")), config);
  assert.equal(await exists(join(ws, "store", "hooks", "pre-commit")), false);
});
