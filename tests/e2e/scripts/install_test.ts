import assert from "node:assert/strict";
import { denoDir, REPO_ROOT, runDeft } from "../../helpers/deft.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";

const DEMO = `${REPO_ROOT}examples/demo`;
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** A copy of the demo repository (a git repo) in a fresh folder; returns its real path. */
async function demoRepo(): Promise<string> {
  const dir = await tempDirUntilExit("deft-elsewhere-");
  for (const entry of Deno.readDirSync(`${DEMO}/repo`)) {
    await Deno.copyFile(`${DEMO}/repo/${entry.name}`, `${dir}/${entry.name}`);
  }
  for (
    const args of [["init", "-q"], ["add", "."], [
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@t",
      "commit",
      "-qm",
      "init",
    ]]
  ) {
    await new Deno.Command("git", { args, cwd: dir, stdout: "null", stderr: "null" }).output();
  }
  return dir;
}

Deno.test("deno task install puts a deft launcher in --dir that runs from any folder", async () => {
  // Removed at the end: the install copies Deno (about 100 MB) into it.
  await using homeDir = await tempDir("deft-home-");
  const home = homeDir.path;
  const bin = `${home}/bin`;
  const install = await new Deno.Command(Deno.execPath(), {
    args: ["task", "install", "--dir", bin],
    cwd: REPO_ROOT,
    env: { DENO_DIR: denoDir(), HOME: home, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(install.code, 0, decode(install.stderr));
  assert.match(decode(install.stdout), new RegExp(`installed ${bin}/deft`));
  assert.ok((await Deno.stat(`${bin}/deft`)).mode! & 0o100, "the launcher is executable");

  const repo = await demoRepo();
  const env = {
    DENO_DIR: denoDir(),
    HOME: home,
    NO_COLOR: "1",
    PATH: `${bin}:${Deno.env.get("PATH")}`,
  };
  const deft = async (...args: string[]) => {
    const out = await new Deno.Command("deft", {
      args,
      cwd: repo,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
  };

  const version = await deft("--version");
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);

  const tools = await deft("tools");
  assert.equal(tools.code, 0, tools.stderr);
  assert.match(tools.stdout, /^bash\s/m);

  // No -w: the workspace is the folder deft was typed in, not Deft's checkout.
  const trajectory = `${home}/replayed.json`;
  const run = await deft("run", "--replay", `${DEMO}/trajectory.json`, "-t", trajectory, "--json");
  assert.equal(run.code, 0, run.stderr);
  const recorded = JSON.parse(await Deno.readTextFile(trajectory));
  assert.equal(recorded.working_dir, repo);
  assert.match(await Deno.readTextFile(`${repo}/calc.py`), /return a \+ b/);
  assert.equal(JSON.parse(run.stdout).success, true);
});

Deno.test("under deno task (cwd = Deft's checkout) the workspace is INIT_CWD", async () => {
  const repo = await demoRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const trajectory = `${home}/t.json`;
  const run = await runDeft(["run", "--replay", `${DEMO}/trajectory.json`, "-t", trajectory], {
    cwd: REPO_ROOT,
    env: { HOME: home, INIT_CWD: repo },
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(await Deno.readTextFile(trajectory)).working_dir, repo);
  assert.match(run.stderr, new RegExp(`in ${repo}`));
});

Deno.test("an INIT_CWD inherited from an outer task is ignored outside Deft's checkout", async () => {
  const repo = await demoRepo();
  await using otherTemp = await tempDir("deft-other-");
  const other = otherTemp.path;
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const trajectory = `${home}/t.json`;
  const run = await runDeft(["run", "--replay", `${DEMO}/trajectory.json`, "-t", trajectory], {
    cwd: repo,
    env: { HOME: home, INIT_CWD: other },
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(await Deno.readTextFile(trajectory)).working_dir, repo);
});

Deno.test("an INIT_CWD is ignored when the entry has no deno.json beside it (a bundle)", async () => {
  const { enterInvocationDir } = await import("../../../src/cli/invocation_dir.ts");
  await using distTemp = await tempDir("deft-dist-");
  const dist = distTemp.path;
  await using otherTemp = await tempDir("deft-other-");
  const other = otherTemp.path;
  const before = Deno.cwd();
  const saved = Deno.env.get("INIT_CWD");
  try {
    Deno.env.set("INIT_CWD", other);
    Deno.chdir(dist);
    assert.equal(enterInvocationDir(`file://${dist}/deft.js`), undefined);
    assert.equal(Deno.cwd(), dist);
    await Deno.writeTextFile(`${dist}/deno.json`, "{}");
    assert.equal(enterInvocationDir(`file://${dist}/main.ts`), other);
    assert.equal(Deno.cwd(), other);
  } finally {
    Deno.chdir(before);
    if (saved === undefined) Deno.env.delete("INIT_CWD");
    else Deno.env.set("INIT_CWD", saved);
  }
});

/** Runs `deno task install ARGS` with `deno` as the Deno doing it; HOME and XDG dirs in `home`. */
async function install(home: string, args: string[], deno = Deno.execPath()) {
  const out = await new Deno.Command(deno, {
    args: ["task", "install", ...args],
    cwd: REPO_ROOT,
    env: { DENO_DIR: denoDir(), HOME: home, NO_COLOR: "1", PATH: "/usr/bin:/bin" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/** Runs the launcher at `path` with only `pathDirs` on PATH. */
async function launch(path: string, args: string[], pathDirs: string[], home: string) {
  const out = await new Deno.Command(path, {
    args,
    cwd: home,
    env: { DENO_DIR: denoDir(), HOME: home, NO_COLOR: "1", PATH: pathDirs.join(":") },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("install leaves an unrelated ~/.local/bin/deft alone unless --force, and says so", async () => {
  await using homeDir = await tempDir("deft-home-");
  const home = homeDir.path;
  const bin = `${home}/.local/bin`;
  await Deno.mkdir(bin, { recursive: true });
  const theirs = "#!/bin/sh\n# someone else's deft\necho theirs\n";
  await Deno.writeTextFile(`${bin}/deft`, theirs, { mode: 0o755 });
  const elsewhere = `${home}/other-deft`;
  await Deno.writeTextFile(elsewhere, "#!/bin/sh\necho linked\n", { mode: 0o755 });

  const refused = await install(home, []);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /exists and was not written by `deno task install`/);
  assert.match(refused.stderr, /not a Deft launcher, so it was left alone/);
  assert.match(refused.stderr, /--force/);
  assert.equal(await Deno.readTextFile(`${bin}/deft`), theirs);
  // Refused before anything was copied: no Deno of Deft's appeared either.
  await assert.rejects(Deno.stat(`${home}/.local/share/deft`), Deno.errors.NotFound);

  // A symbolic link is judged as itself, not by what it points to.
  await Deno.remove(`${bin}/deft`);
  await Deno.symlink(elsewhere, `${bin}/deft`);
  const link = await install(home, []);
  assert.equal(link.code, 1, link.stderr);
  assert.match(link.stderr, /is a symbolic link/);
  assert.equal(await Deno.readLink(`${bin}/deft`), elsewhere);
  assert.equal(await Deno.readTextFile(elsewhere), "#!/bin/sh\necho linked\n");

  const forced = await install(home, ["--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /replaced .*\/deft \(--force\): .* is a symbolic link/);
  assert.ok(!(await Deno.lstat(`${bin}/deft`)).isSymlink);
  assert.equal(await Deno.readTextFile(elsewhere), "#!/bin/sh\necho linked\n");

  // Deft's own launcher is replaced without --force (an update).
  const again = await install(home, []);
  assert.equal(again.code, 0, again.stderr);
  assert.doesNotMatch(again.stdout, /replaced/);
});

Deno.test("install refuses unknown arguments and a --dir without a folder", async () => {
  await using homeDir = await tempDir("deft-home-");
  const typo = await install(homeDir.path, ["--froce"]);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /unknown argument --froce/);
  const bare = await install(homeDir.path, ["--dir"]);
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /--dir needs a folder/);
});

Deno.test("the launcher survives a cleared npm cache, and says what to do when no Deno is left", async () => {
  await using homeDir = await tempDir("deft-home-");
  const home = homeDir.path;
  // The Deno doing the install lives in a stand-in for npx's cache, which is then cleared.
  const npxCache = `${home}/.npm/_npx/0123abcd/node_modules/deno`;
  await Deno.mkdir(npxCache, { recursive: true });
  await Deno.copyFile(Deno.execPath(), `${npxCache}/deno`);
  await Deno.chmod(`${npxCache}/deno`, 0o755);
  const installed = await install(home, [], `${npxCache}/deno`);
  assert.equal(installed.code, 0, installed.stderr);
  await Deno.remove(`${home}/.npm`, { recursive: true });

  const deft = `${home}/.local/bin/deft`;
  const launcherText = await Deno.readTextFile(deft);
  assert.ok(!launcherText.includes(".npm"), launcherText);
  const own = `${home}/.local/share/deft/deno/${Deno.version.deno}/deno`;
  assert.ok((await Deno.stat(own)).mode! & 0o100, "Deft's own Deno is executable");

  // No deno on PATH at all: the launcher needs only its own copy.
  const empty = `${home}/empty`;
  await Deno.mkdir(empty);
  const version = await launch(deft, ["--version"], [empty], home);
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  assert.equal(version.stderr, "");

  // Its own copy gone too: a deno on PATH stands in, with a note saying how to repair.
  await Deno.remove(`${home}/.local/share/deft`, { recursive: true });
  const onPath = `${home}/path`;
  await Deno.mkdir(onPath);
  await Deno.symlink(Deno.execPath(), `${onPath}/deno`);
  const fallback = await launch(deft, ["--version"], [onPath], home);
  assert.equal(fallback.code, 0, fallback.stderr);
  assert.match(fallback.stdout, /^\d+\.\d+\.\d+\n$/);
  assert.match(fallback.stderr, /is gone; using .*\/path\/deno/);
  assert.match(fallback.stderr, /task install/);

  // Nothing left: a clear message and exit 127, not "not found" from the shell.
  const none = await launch(deft, ["--version"], [empty], home);
  assert.equal(none.code, 127);
  assert.equal(none.stdout, "");
  assert.match(none.stderr, /the Deno Deft installed\) is gone and there is no deno on PATH/);
  assert.match(
    none.stderr,
    new RegExp(`Reinstall: cd .* && npx -y deno@${Deno.version.deno} task install`),
  );
});
