/**
 * The patch against a hostile workspace on the host: a FIFO where git reads an ignore or
 * attributes list, a configuration that points git at one, a git that never returns or prints
 * without end, a split index, a file name that is not UTF-8, a folder whose path holds `:`. The
 * patch is computed, or refused with an error that names the cause, always within a deadline;
 * nothing is written into the user's `.git`. No test ever waits on a real hang: each runs git
 * with a short deadline and races the whole call against a timer of its own.
 */
import assert from "node:assert/strict";
import { PatchError, recordBaseline, workspacePatch } from "../../../src/agent/patch.ts";
import { GitLimitError, runGit } from "../../../src/policy/git.ts";
import type { GitSandbox } from "../../../src/policy/git.ts";
import { git } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const AUTHOR = ["-c", "user.name=t", "-c", "user.email=t@t"];

/** A repository in `dir` with one committed file, `a.txt`. */
async function repoIn(dir: string): Promise<string> {
  await Deno.writeTextFile(`${dir}/a.txt`, "one\n");
  await git(dir, "init", "-q");
  await git(dir, "add", "a.txt");
  await git(dir, ...AUTHOR, "commit", "-qm", "init");
  return dir;
}

/** `promise`, or a failure after `ms`: a test never hangs on what it checks. */
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

/** `mkfifo path` (no writer ever opens it: a reader would wait for ever). */
async function mkfifo(path: string): Promise<void> {
  const out = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(out.success, "mkfifo failed");
}

const SHORT = { timeoutMs: 5_000 };

for (const mode of ["none", "workspace-write"] as const) {
  Deno.test(`patch: a FIFO named .gitignore or .gitattributes is named, never waited on (sandbox ${mode})`, async () => {
    for (const name of [".gitignore", "sub/.gitattributes"]) {
      await using tmp = await tempDir("deft-fifo-");
      const repo = await repoIn(tmp.path);
      const sandbox: GitSandbox = { mode, workspace: repo };
      const baseline = await recordBaseline(repo, { sandbox, limits: SHORT });
      try {
        await Deno.writeTextFile(`${repo}/a.txt`, "two\n");
        await Deno.mkdir(`${repo}/sub`, { recursive: true });
        await mkfifo(`${repo}/${name}`);
        const started = Date.now();
        await assert.rejects(
          within(20_000, workspacePatch(repo, { baseline, sandbox, limits: SHORT })),
          (e: Error) => {
            assert.ok(e instanceof PatchError, `${e.name}: ${e.message}`);
            assert.match(e.message, new RegExp(name.replace(".", "\\.")));
            assert.match(e.message, /not a regular file/);
            return true;
          },
        );
        // Refused before git opened it, not stopped by the deadline.
        assert.ok(Date.now() - started < SHORT.timeoutMs, "waited for the deadline");
      } finally {
        baseline?.dispose();
      }
    }
  });
}

Deno.test("patch: .git/config naming FIFOs as excludes and attributes files neither hangs the start nor the patch", async () => {
  await using tmp = await tempDir("deft-fifo-config-");
  const repo = await repoIn(tmp.path);
  await mkfifo(`${tmp.path}/.git/excludes-fifo`);
  await mkfifo(`${tmp.path}/.git/attributes-fifo`);
  await git(repo, "config", "core.excludesFile", `${repo}/.git/excludes-fifo`);
  await git(repo, "config", "core.attributesFile", `${repo}/.git/attributes-fifo`);
  const baseline = await within(20_000, recordBaseline(repo, { limits: SHORT }));
  try {
    assert.ok(baseline, "no baseline");
    await Deno.writeTextFile(`${repo}/a.txt`, "two\n");
    await Deno.writeTextFile(`${repo}/new.txt`, "new\n");
    const patch = await within(20_000, workspacePatch(repo, { baseline, limits: SHORT }));
    assert.match(patch, /\+two/);
    assert.match(patch, /\+\+\+ b\/new\.txt/);
  } finally {
    baseline?.dispose();
  }
});

Deno.test("patch: a git that never returns is stopped at its deadline, with an error saying so", async () => {
  await using tmp = await tempDir("deft-git-hang-");
  const repo = await repoIn(tmp.path);
  // An include git reads before anything else, and waits on for ever: nothing Deft can see first.
  await mkfifo(`${repo}/.git/hang`);
  await git(repo, "config", "include.path", `${repo}/.git/hang`);
  const started = Date.now();
  await assert.rejects(
    within(20_000, workspacePatch(repo, { limits: { timeoutMs: 1_500 } })),
    (e: Error) => {
      assert.ok(e instanceof GitLimitError, `${e.name}: ${e.message}`);
      assert.match(e.message, /did not finish within 1\.5 s/);
      return true;
    },
  );
  assert.ok(Date.now() - started < 10_000);
});

Deno.test("git: output past the limit is cut, the command stopped, and the error says so", async () => {
  await using tmp = await tempDir("deft-git-flood-");
  const repo = await repoIn(tmp.path);
  await Deno.writeTextFile(`${repo}/a.txt`, "x".repeat(100_000));
  await assert.rejects(
    runGit(repo, ["diff", "--no-ext-diff"], { limits: { maxOutputBytes: 10_000 } }),
    (e: Error) => {
      assert.ok(e instanceof GitLimitError, `${e.name}: ${e.message}`);
      assert.match(e.message, /printed more than/);
      return true;
    },
  );
  // Within the limit, the same command answers.
  const whole = await runGit(repo, ["diff", "--no-ext-diff"], {
    limits: { maxOutputBytes: 1_000_000 },
  });
  assert.ok(whole.ok && whole.out.length > 100_000);
});

Deno.test("patch: a split index (core.splitIndex, feature.manyFiles) writes nothing into the user's .git", async () => {
  await using tmp = await tempDir("deft-split-");
  const repo = await repoIn(tmp.path);
  await git(repo, "config", "core.splitIndex", "true");
  await git(repo, "config", "feature.manyFiles", "true");
  await git(repo, "config", "splitIndex.maxPercentChange", "0");
  const before = [...Deno.readDirSync(`${repo}/.git`)].map((e) => e.name).sort();
  const baseline = await recordBaseline(repo);
  try {
    await Deno.writeTextFile(`${repo}/a.txt`, "two\n");
    await Deno.writeTextFile(`${repo}/b.txt`, "bee\n");
    const patch = await workspacePatch(repo, { baseline });
    assert.match(patch, /\+two/);
    assert.match(patch, /\+bee/);
  } finally {
    baseline?.dispose();
  }
  const after = [...Deno.readDirSync(`${repo}/.git`)].map((e) => e.name).sort();
  assert.deepEqual(after.filter((n) => n.startsWith("sharedindex")), []);
  assert.deepEqual(after, before);
});

Deno.test("patch: an untracked file whose name is not UTF-8 keeps the whole patch, that file included", async () => {
  await using tmp = await tempDir("deft-latin1-");
  const repo = await repoIn(tmp.path);
  const baseline = await recordBaseline(repo);
  try {
    await Deno.writeTextFile(`${repo}/a.txt`, "two\n");
    // "café.txt" in Latin-1: Deno cannot spell the name, so the shell makes it.
    const made = await new Deno.Command("sh", {
      args: ["-c", "printf 'bonjour\\n' > \"$(printf 'caf\\351.txt')\""],
      cwd: repo,
    }).output();
    assert.ok(made.success);
    const patch = await workspacePatch(repo, { baseline });
    assert.match(patch, /\+two/);
    // git quotes the name it cannot show as UTF-8: the patch still applies.
    assert.match(patch, /\+\+\+ "b\/caf\\351\.txt"/);
    assert.match(patch, /\+bonjour/);
  } finally {
    baseline?.dispose();
  }
});

Deno.test("patch: a repository under a path holding ':' gets its baseline and patch", async () => {
  await using tmp = await tempDir("deft-colon-");
  const dir = `${tmp.path}/proj:v2`;
  await Deno.mkdir(dir);
  const repo = await repoIn(dir);
  // The user's own edit before the run: not the run's.
  await Deno.writeTextFile(`${repo}/a.txt`, "mine\n");
  const baseline = await recordBaseline(repo);
  try {
    assert.ok(baseline, "no baseline under a path with ':'");
    await Deno.writeTextFile(`${repo}/a.txt`, "mine\nrun's\n");
    const patch = await workspacePatch(repo, { baseline });
    assert.match(patch, /^\+run's$/m);
    assert.doesNotMatch(patch, /^[-+]one$|^\+mine$/m);
  } finally {
    baseline?.dispose();
  }
});

Deno.test("patch: a FIFO where the workspace's .git should be is never read (sandbox workspace-write)", async () => {
  await using tmp = await tempDir("deft-fifo-dotgit-");
  const outer = await repoIn(tmp.path);
  // The workspace is a folder of the repository; the model made its own `.git` a FIFO.
  const workspace = `${outer}/sub`;
  await Deno.mkdir(workspace);
  await mkfifo(`${workspace}/.git`);
  const sandbox: GitSandbox = { mode: "workspace-write", workspace };
  // Nothing hangs: git decides (the FIFO is no repository), within the deadline.
  await within(20_000, workspacePatch(workspace, { sandbox, limits: SHORT }).catch(() => ""));
});

Deno.test("patch: the repository's diff.noprefix, diff.mnemonicPrefix and diff.relative leave the patch's paths as git apply reads them", async () => {
  await using tmp = await tempDir("deft-prefix-");
  const repo = await repoIn(tmp.path);
  await Deno.mkdir(`${repo}/sub`);
  await Deno.writeTextFile(`${repo}/sub/a.txt`, "one\n");
  await git(repo, "add", "sub/a.txt");
  await git(repo, ...AUTHOR, "commit", "-qm", "sub");
  await Deno.writeTextFile(`${repo}/sub/a.txt`, "two\n");
  for (
    const [key, where] of [["noprefix", repo], ["mnemonicPrefix", repo], [
      "relative",
      `${repo}/sub`,
    ]]
  ) {
    await git(repo, "config", `diff.${key}`, "true");
    // Read with -p1 from the repository's top (as `Task` apply and the child's start do), a
    // path without its `a/`, or relative to the folder, would name another file: the top's
    // a.txt, which holds the same text.
    const patch = await workspacePatch(where);
    assert.match(patch, /^--- a\/sub\/a\.txt$/m, `with diff.${key}: ${patch}`);
    assert.match(patch, /^\+\+\+ b\/sub\/a\.txt$/m, `with diff.${key}: ${patch}`);
    await git(repo, "config", "--unset", `diff.${key}`);
  }
});
