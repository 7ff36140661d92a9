/**
 * A session's sandboxed git goes to one long-lived runner per sandbox view (src/policy/git_runner.ts)
 * instead of one bwrap per command. What a user would notice if it went wrong: many sandboxes
 * started (slow), a hung or flooding git not stopped (a run that never ends), a runner left behind
 * (a Deft that does not exit, or a process that outlives it). Real bwrap, real git; a logging
 * bwrap counts the sandboxes. No test waits on a real hang: short deadlines, and a timer of its
 * own around each call.
 *
 * Promises of the git runner, each with the test that guards it (here unless a file is named):
 * - many commands start one sandbox, each answered as git would: "git runner: twenty sandboxed
 *   git commands start one sandbox …"
 * - a hung git is stopped at its deadline and the next command answers: "git runner: a hung git …"
 * - while one hangs, a second sandbox answers, and a command queued behind the hung one runs once
 *   it is stopped: "git runner: while one sandboxed git hangs …"
 * - output past the limit is cut, with an error saying so: "git runner: output past the limit …"
 * - Deft exits when done, leaving no runner or folder: "git runner: a Deft that used it exits …"
 * - a scratch folder is private and writable by every command of the view: "git runner: a
 *   scratch folder is private …"
 * - a bubblewrap that cannot start is a sandbox error, never git's answer: "git runner: a
 *   bubblewrap that cannot start …"
 * - two views that differ only in a read-only path never share a runner: git_runner_views_test.ts
 *   (both tests, one for each order)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { GitLimitError, type GitSandbox, gitScratch, runGit } from "../../../src/policy/git.ts";
import { SandboxUnavailableError } from "../../../src/policy/sandbox.ts";
import { git } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const AUTHOR = ["-c", "user.name=t", "-c", "user.email=t@t"];

async function repoIn(dir: string): Promise<string> {
  await Deno.writeTextFile(`${dir}/a.txt`, "one\n");
  await git(dir, "init", "-q");
  await git(dir, "add", "a.txt");
  await git(dir, ...AUTHOR, "commit", "-qm", "init");
  return dir;
}

/** A bwrap that appends one line per start to `log`, then runs the real one. */
async function loggingBwrap(dir: string, log: string): Promise<string> {
  const real = await new Deno.Command("bash", { args: ["-c", "command -v bwrap"] }).output();
  const path = join(dir, "bwrap");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\necho start >> "${log}"\nexec "${
      new TextDecoder().decode(real.stdout).trim()
    }" "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

async function starts(log: string): Promise<number> {
  const text = await Deno.readTextFile(log).catch(() => "");
  return text.split("\n").filter((l) => l === "start").length;
}

/** `promise`, or a failure after `ms`. */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) =>
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("git runner: twenty sandboxed git commands start one sandbox, and each answers as git would", async () => {
  await using tmp = await tempDir("deft-git-runner-");
  await Deno.mkdir(join(tmp.path, "repo"));
  const repo = await repoIn(join(tmp.path, "repo"));
  const log = join(tmp.path, "bwrap.log");
  const sandbox: GitSandbox = {
    mode: "workspace-write",
    workspace: repo,
    bwrapPath: await loggingBwrap(tmp.path, log),
  };
  const head = await git(repo, "rev-parse", "HEAD");
  for (let i = 0; i < 10; i++) {
    const r = await runGit(repo, ["rev-parse", "HEAD"], { sandbox });
    assert.equal(r.out.trim(), head);
    // A failing command is git's answer, with its status and message, not the runner's.
    const bad = await runGit(repo, ["rev-parse", "--verify", "-q", "no-such-ref"], { sandbox });
    assert.equal(bad.ok, false);
    assert.equal(bad.code, 1);
  }
  // stdin reaches git as bytes; binary output comes back as bytes.
  const blob = new Uint8Array([0, 1, 2, 255, 10, 0]);
  const written = await runGit(repo, ["hash-object", "--stdin"], { sandbox, stdin: blob });
  const expected = await git(repo, "hash-object", `${repo}/a.txt`);
  assert.notEqual(written.out.trim(), expected);
  assert.match(written.out.trim(), /^[0-9a-f]{40}$/);
  assert.equal(await starts(log), 1);
});

Deno.test("git runner: a hung git in the sandbox is stopped at its deadline, and the next command answers", async () => {
  await using tmp = await tempDir("deft-git-runner-hang-");
  const repo = await repoIn(tmp.path);
  const sandbox: GitSandbox = { mode: "workspace-write", workspace: repo };
  assert.ok((await runGit(repo, ["status", "--short"], { sandbox })).ok);
  // An include git opens before anything else, and waits on for ever (a FIFO no one writes).
  const fifo = await new Deno.Command("mkfifo", { args: [`${repo}/.git/hang`] }).output();
  assert.ok(fifo.success);
  await git(repo, "config", "include.path", `${repo}/.git/hang`);
  const started = Date.now();
  await assert.rejects(
    within(20_000, runGit(repo, ["status"], { sandbox, limits: { timeoutMs: 1_500 } })),
    (e: Error) => {
      assert.ok(e instanceof GitLimitError, `${e.name}: ${e.message}`);
      assert.match(e.message, /did not finish within 1\.5 s/);
      return true;
    },
  );
  assert.ok(Date.now() - started < 10_000, "waited well past the deadline");
  // (Not with `git config`: it would read the FIFO too.)
  const config = await Deno.readTextFile(`${repo}/.git/config`);
  await Deno.writeTextFile(`${repo}/.git/config`, config.replace(/\[include\][^[]*/, ""));
  const after = await within(20_000, runGit(repo, ["rev-parse", "HEAD"], { sandbox }));
  assert.equal(after.out.trim(), await git(repo, "rev-parse", "HEAD"));
});

Deno.test("git runner: while one sandboxed git hangs, a second sandbox answers the next commands, and one that waited on the hung one runs once it is stopped", async () => {
  await using tmp = await tempDir("deft-git-runner-two-");
  await Deno.mkdir(join(tmp.path, "repo"));
  const repo = await repoIn(join(tmp.path, "repo"));
  const log = join(tmp.path, "bwrap.log");
  const sandbox: GitSandbox = {
    mode: "workspace-write",
    workspace: repo,
    bwrapPath: await loggingBwrap(tmp.path, log),
  };
  const head = await git(repo, "rev-parse", "HEAD");
  assert.equal((await runGit(repo, ["rev-parse", "HEAD"], { sandbox })).out.trim(), head);
  // A git folder whose config is a FIFO no one writes: git waits on it for ever.
  const hangDir = join(repo, "hang.git");
  for (const folder of ["objects", "refs"]) {
    await Deno.mkdir(join(hangDir, folder), { recursive: true });
  }
  await Deno.writeTextFile(join(hangDir, "HEAD"), "ref: refs/heads/main\n");
  const fifo = await new Deno.Command("mkfifo", { args: [join(hangDir, "config")] }).output();
  assert.ok(fifo.success);
  let hungSettled = false;
  const hung = runGit(repo, ["rev-parse", "HEAD"], {
    sandbox,
    env: { GIT_DIR: hangDir },
    limits: { timeoutMs: 15_000 },
  }).finally(() => hungSettled = true);
  hung.catch(() => {});
  // Sent while the first runner holds the hung command: it waits its turn there, and a second
  // runner starts.
  const queued = runGit(repo, ["rev-parse", "HEAD"], { sandbox });
  queued.catch(() => {});
  const next = await within(
    14_000,
    (async () => {
      while (await starts(log) < 2) await new Promise((r) => setTimeout(r, 50));
      return await runGit(repo, ["rev-parse", "HEAD"], { sandbox });
    })(),
  );
  assert.equal(next.out.trim(), head);
  assert.equal(hungSettled, false, "the next command waited for the hung one");
  await assert.rejects(hung, (e: Error) => e instanceof GitLimitError);
  // The one sent behind the hung command never ran there: it runs in the other sandbox.
  assert.equal((await within(20_000, queued)).out.trim(), head);
  assert.equal(await starts(log), 2);
});

Deno.test("git runner: output past the limit in the sandbox is cut, and the error says so", async () => {
  await using tmp = await tempDir("deft-git-runner-flood-");
  const repo = await repoIn(tmp.path);
  const sandbox: GitSandbox = { mode: "workspace-write", workspace: repo };
  await Deno.writeTextFile(`${repo}/a.txt`, "x\n".repeat(200_000));
  await assert.rejects(
    within(
      20_000,
      runGit(repo, ["diff", "--no-ext-diff"], { sandbox, limits: { maxOutputBytes: 10_000 } }),
    ),
    (e: Error) => {
      assert.ok(e instanceof GitLimitError, `${e.name}: ${e.message}`);
      assert.match(e.message, /printed more than .* on stdout/);
      return true;
    },
  );
  const whole = await within(20_000, runGit(repo, ["diff", "--no-ext-diff"], { sandbox }));
  assert.ok(whole.ok && whole.out.length > 400_000);
});

Deno.test("git runner: a Deft that used it exits when its work is done, and leaves no runner or folder behind", async () => {
  await using tmp = await tempDir("deft-git-runner-exit-");
  const repo = await repoIn(tmp.path);
  const script = join(tmp.path, "use.ts");
  const src = new URL("../../../src/policy/git.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    `import { gitScratch, runGit } from "${src}";\n` +
      `const sandbox = { mode: "workspace-write" as const, workspace: ${
        JSON.stringify(repo)
      } };\n` +
      `const r = await runGit(${JSON.stringify(repo)}, ["rev-parse", "HEAD"], { sandbox });\n` +
      `console.log(JSON.stringify({ ok: r.ok, scratch: await gitScratch(sandbox, "probe") }));\n`,
  );
  const started = Date.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const exited = await within(30_000, child.output());
  assert.ok(exited.success, new TextDecoder().decode(exited.stderr));
  assert.ok(Date.now() - started < 25_000);
  const { ok, scratch } = JSON.parse(new TextDecoder().decode(exited.stdout));
  assert.ok(ok);
  // The view's folder (the scratch folder's parent) went with the process, and so did its runner.
  const root = join(scratch, "..");
  assert.equal(await Deno.stat(root).then(() => true, () => false), false, root);
  const ps = await new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" }).output();
  const left = new TextDecoder().decode(ps.stdout).split("\n").filter((l) => l.includes(root));
  assert.deepEqual(left, []);
});

Deno.test("git runner: a scratch folder is private and every sandboxed git command may write it", async () => {
  await using tmp = await tempDir("deft-git-runner-scratch-");
  const repo = await repoIn(tmp.path);
  const sandbox: GitSandbox = { mode: "read-only", workspace: repo };
  const scratch = await gitScratch(sandbox, "patch");
  assert.equal((await Deno.stat(join(scratch, ".."))).mode! & 0o077, 0);
  const env = {
    GIT_INDEX_FILE: `${scratch}/index`,
    GIT_OBJECT_DIRECTORY: `${scratch}/objects`,
    GIT_ALTERNATE_OBJECT_DIRECTORIES: `${repo}/.git/objects`,
  };
  const read = await runGit(repo, ["read-tree", "HEAD"], { sandbox, env });
  assert.ok(read.ok, read.err);
  assert.ok((await Deno.stat(`${scratch}/index`)).isFile);
  // The workspace itself stays read-only to it.
  const touch = await runGit(repo, ["update-index", "--refresh"], { sandbox });
  assert.equal(touch.ok, false);
});

Deno.test("git runner: a bubblewrap that cannot start says why, as a sandbox error, never as git's answer", async () => {
  await using tmp = await tempDir("deft-git-runner-nobwrap-");
  const repo = await repoIn(tmp.path);
  const broken = join(tmp.path, "bwrap");
  await Deno.writeTextFile(
    broken,
    "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
  );
  await Deno.chmod(broken, 0o755);
  const sandbox: GitSandbox = { mode: "workspace-write", workspace: repo, bwrapPath: broken };
  await assert.rejects(
    within(20_000, runGit(repo, ["rev-parse", "HEAD"], { sandbox })),
    (e: Error) => {
      assert.ok(e instanceof SandboxUnavailableError, `${e.name}: ${e.message}`);
      assert.match(e.message, /could not start git: bwrap: setting up uid map/);
      return true;
    },
  );
});
