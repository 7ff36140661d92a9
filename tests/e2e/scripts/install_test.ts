import assert from "node:assert/strict";
import { denoDir, REPO_ROOT, runDeft } from "../../helpers/deft.ts";

const DEMO = `${REPO_ROOT}examples/demo`;
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** A copy of the demo repository (a git repo) in a fresh folder; returns its real path. */
async function demoRepo(): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-elsewhere-" }));
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
  const home = await Deno.makeTempDir({ prefix: "deft-home-" });
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
  const home = await Deno.makeTempDir({ prefix: "deft-home-" });
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
  const other = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-other-" }));
  const home = await Deno.makeTempDir({ prefix: "deft-home-" });
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
  const dist = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-dist-" }));
  const other = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-other-" }));
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
