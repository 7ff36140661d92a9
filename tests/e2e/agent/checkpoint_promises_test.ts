/**
 * Promises of checkpoints, rewind and the patch that no test guarded (issue 50), each asserted as
 * a user would see it:
 *
 * - `--to N` names one state: after a forced rewind over an outside edit, the state before it has
 *   a number of its own that brings the edit back, and turn 2's checkpoint is still named by
 *   its: "rewind --to N names one state …";
 * - a restore is byte-exact and links stay links whatever the repository's `.git/config` says
 *   (`core.autocrlf=true`, `core.symlinks=false`): "a restore is byte-exact and a link stays a
 *   link …";
 * - a new symlink to a large file is judged as a link: it stays in the patch, as a link:
 *   "patch: a new symlink to a large file stays in the patch, as a link";
 * - the patch's git runs inside the sandbox: a `git` first on PATH that writes outside the
 *   workspace leaves nothing there: "patch: with a sandbox, a git first on PATH that writes
 *   outside …".
 *
 * The other promises of checkpoints and rewind are guarded in tests/e2e/agent/checkpoints_test.ts,
 * checkpoints_hostile_test.ts, checkpoints_container_test.ts and tests/e2e/cli/rewind_test.ts.
 */
import assert from "node:assert/strict";
import { interactiveOnStdin, runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { git } from "../../helpers/repo.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { recordBaseline, workspacePatch } from "../../../src/agent/patch.ts";

async function repo(files: Record<string, string>): Promise<string> {
  const dir = await tempDirUntilExit("deft-promise-repo-");
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  await git(dir, "init", "-q");
  await git(dir, "add", ".");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
  return dir;
}

/** An interactive session in `dir` whose turns run these shell commands, one a turn. */
async function session(dir: string, env: Record<string, string>, commands: string[]) {
  const mock = MockLLM.start(
    commands.flatMap((command, i) => [
      chatToolCalls([["bash", { command }]]),
      chatText(`done ${i + 1}`),
    ]),
  );
  try {
    const run = await interactiveOnStdin(
      dir,
      mock,
      commands.map((_, i) => `turn ${i + 1}\n`).join(""),
      { args: ["--approval", "never"], cwd: env.HOME, env },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(mock.requests.length, 2 * commands.length, run.stderr);
  } finally {
    await mock.close();
  }
}

async function home(): Promise<Record<string, string>> {
  const h = await tempDirUntilExit("deft-home-");
  return { HOME: h, XDG_STATE_HOME: `${h}/state` };
}

Deno.test("rewind --to N names one state: the outside edit a forced rewind overwrote comes back by its own number, turn 2's by its", async () => {
  const env = await home();
  const dir = await repo({ "f.txt": "zero\n" });
  await session(dir, env, ["echo one > f.txt", "echo two > f.txt"]);
  await Deno.writeTextFile(`${dir}/f.txt`, "mine\n");
  const back = await runDeft(["rewind", "-w", dir, "--to", "1", "--force"], { cwd: env.HOME, env });
  assert.equal(back.code, 0, back.stderr);
  assert.equal(await Deno.readTextFile(`${dir}/f.txt`), "one\n");
  assert.match(back.stderr, /the state before is checkpoint 3: deft rewind --to 3 undoes this/);
  const again = await runDeft(["rewind", "-w", dir, "--to", "3"], { cwd: env.HOME, env });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(await Deno.readTextFile(`${dir}/f.txt`), "mine\n", "the state before the rewind");
  const turn2 = await runDeft(["rewind", "-w", dir, "--to", "2"], { cwd: env.HOME, env });
  assert.equal(turn2.code, 0, turn2.stderr);
  assert.equal(await Deno.readTextFile(`${dir}/f.txt`), "two\n", "turn 2 as it was taken");
});

Deno.test("a restore is byte-exact and a link stays a link under core.autocrlf=true and core.symlinks=false", async () => {
  const env = await home();
  const dir = await repo({ "crlf.txt": "a\r\nb\r\n", "lf.txt": "a\nb\n" });
  await Deno.symlink("lf.txt", `${dir}/link`);
  await git(dir, "add", "link");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "link");
  await git(dir, "config", "core.autocrlf", "true");
  await git(dir, "config", "core.symlinks", "false");
  await session(dir, env, [
    "printf 'x\\n' > crlf.txt && printf 'y\\r\\n' > lf.txt && ln -sfn crlf.txt link && " +
    "printf 'n1\\r\\n' > new.txt",
    "printf 'z\\n' > crlf.txt && printf 'w\\n' > lf.txt && rm link && printf 'n2\\n' > new.txt",
  ]);
  const back = await runDeft(["rewind", "-w", dir, "--to", "1"], { cwd: env.HOME, env });
  assert.equal(back.code, 0, back.stderr);
  assert.equal(await Deno.readTextFile(`${dir}/crlf.txt`), "x\n");
  assert.equal(await Deno.readTextFile(`${dir}/lf.txt`), "y\r\n");
  assert.equal(await Deno.readTextFile(`${dir}/new.txt`), "n1\r\n");
  assert.ok((await Deno.lstat(`${dir}/link`)).isSymlink, "the link came back as a link");
  assert.equal(await Deno.readLink(`${dir}/link`), "crlf.txt");
  const start = await runDeft(["rewind", "-w", dir, "--to", "0"], { cwd: env.HOME, env });
  assert.equal(start.code, 0, start.stderr);
  assert.equal(await Deno.readTextFile(`${dir}/crlf.txt`), "a\r\nb\r\n");
  assert.equal(await Deno.readTextFile(`${dir}/lf.txt`), "a\nb\n");
  assert.equal(await Deno.readLink(`${dir}/link`), "lf.txt");
});

Deno.test("patch: a new symlink to a large file stays in the patch, as a link", async () => {
  const dir = await repo({ "a.txt": "one\n" });
  await using outside = await tempDir("deft-big-target-");
  const baseline = await recordBaseline(dir);
  try {
    await Deno.writeFile(`${outside.path}/big.bin`, new Uint8Array(20 * 1024 * 1024));
    await Deno.symlink(`${outside.path}/big.bin`, `${dir}/big-link`);
    await Deno.symlink("a.txt", `${dir}/near-link`);
    const patch = await workspacePatch(dir, { baseline });
    assert.match(patch, /^diff --git a\/big-link b\/big-link\nnew file mode 120000$/m);
    assert.ok(patch.includes(`+${outside.path}/big.bin`), patch);
    assert.match(patch, /^new file mode 120000$/m);
    assert.match(patch, /b\/near-link/);
  } finally {
    await baseline?.dispose();
  }
});

Deno.test("patch: with a sandbox, a git first on PATH that writes outside the workspace leaves nothing there", async () => {
  const dir = await repo({ "a.txt": "one\n" });
  await using bin = await tempDir("deft-fake-git-");
  const h = await tempDirUntilExit("deft-victim-home-");
  const realGit = new TextDecoder().decode(
    (await new Deno.Command("sh", { args: ["-c", "command -v git"] }).output()).stdout,
  ).trim();
  await Deno.writeTextFile(
    `${bin.path}/git`,
    `#!/bin/sh\necho ran >> '${h}/marker' 2>/dev/null\nexec '${realGit}' "$@"\n`,
  );
  await Deno.chmod(`${bin.path}/git`, 0o755);
  const path = Deno.env.get("PATH") ?? "";
  Deno.env.set("PATH", `${bin.path}:${path}`);
  try {
    const sandbox = { mode: "workspace-write" as const, workspace: dir };
    const baseline = await recordBaseline(dir, { sandbox });
    await Deno.writeTextFile(`${dir}/a.txt`, "two\n");
    const patch = await workspacePatch(dir, { baseline, sandbox });
    await baseline?.dispose();
    assert.match(patch, /^\+two$/m, "the fake git ran git");
  } finally {
    Deno.env.set("PATH", path);
  }
  assert.equal(
    await Deno.lstat(`${h}/marker`).then(() => "written", () => "nothing"),
    "nothing",
    "the git first on PATH wrote outside the workspace",
  );
  // The fake git is the one that ran: unsandboxed, the same calls write the marker.
  Deno.env.set("PATH", `${bin.path}:${path}`);
  try {
    await workspacePatch(dir);
  } finally {
    Deno.env.set("PATH", path);
  }
  assert.equal(await Deno.lstat(`${h}/marker`).then(() => "written", () => "nothing"), "written");
});
