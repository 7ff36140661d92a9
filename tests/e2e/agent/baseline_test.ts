/**
 * "This run's changes only": a run's patch, files changed and `--patch-path` are measured from
 * the workspace as it was when the run started, so the user's uncommitted work stays theirs, and
 * recording that start state writes nothing into the user's repository.
 */
import assert from "node:assert/strict";
import { MAX_NEW_BINARY_BYTES, recordBaseline, workspacePatch } from "../../../src/agent/patch.ts";
import { runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { git, makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";
import { outsideTmp } from "../../helpers/places.ts";
import { markersIn, plantHostileConfig } from "../../helpers/hostile_git.ts";

const UTIL = "def twice(x):\n    return x * 3\n";

/** The buggy repository plus a committed util.py. */
async function repoWithUtil(): Promise<string> {
  const repo = await makeBuggyRepo();
  await Deno.writeTextFile(`${repo}/util.py`, UTIL);
  await git(repo, "add", "util.py");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "util");
  return repo;
}

/** The user's object store and index as files (no git run: the repository may be hostile). */
async function gitFiles(repo: string) {
  const objects: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      if (e.isDirectory) await walk(`${dir}/${e.name}`);
      else objects.push(`${dir}/${e.name}`);
    }
  };
  await walk(`${repo}/.git/objects`);
  return { objects: objects.sort(), index: await Deno.readFile(`${repo}/.git/index`) };
}

/** Everything a run must not touch in the user's repository. */
async function repoState(repo: string) {
  return {
    ...await gitFiles(repo),
    cached: await git(repo, "diff", "--cached", "--binary"),
    status: (await git(repo, "status", "--porcelain=v2", "-uall")).split("\n").sort(),
    refs: await git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
    head: await git(repo, "rev-parse", "HEAD"),
  };
}

/** The files a patch touches, sorted. */
function patchFiles(patch: string): string[] {
  return [...patch.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1]).sort();
}

Deno.test("a dirty tree before a run: patch and files changed hold only the run's edit", async () => {
  const repo = await repoWithUtil();
  // The user's own work in progress: a modified tracked file, a staged one, untracked files of
  // every kind (text, a small and a large binary, a symbolic link).
  await Deno.writeTextFile(`${repo}/calc.py`, "def add(a, b):\n    return a - b  # mine\n");
  await Deno.writeTextFile(`${repo}/check.py`, "print('staged')\n");
  await git(repo, "add", "check.py");
  await Deno.writeTextFile(`${repo}/notes.txt`, "my notes\r\n\twith a tab\n");
  await Deno.writeFile(`${repo}/icon.bin`, new Uint8Array([0, 1, 2, 255]));
  await Deno.writeFile(`${repo}/model.bin`, new Uint8Array(MAX_NEW_BINARY_BYTES + 10));
  await Deno.symlink("calc.py", `${repo}/link.py`);
  const before = await repoState(repo);
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/util.py`,
      old_str: "return x * 3",
      new_str: "return x * 2",
    }]]),
    chatToolCalls([["task_done", {}]], "fixed"),
  ]);
  await using home = await tempDir("deft-home-");
  try {
    const patchPath = `${home.path}/run.patch`;
    const r = await runMocked(mock, "fix twice", repo, {
      extra: ["--must-patch", "--patch-path", patchPath, "--output-format", "json"],
      cwd: home.path,
      env: { HOME: home.path },
    });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.deepEqual(summary.files_changed, [{ path: "util.py", added: 1, removed: 1 }]);
    const patch = await Deno.readTextFile(patchPath);
    assert.deepEqual(patchFiles(patch), ["util.py"], patch);
    assert.match(patch, /^- {4}return x \* 3$/m);
    assert.match(patch, /^\+ {4}return x \* 2$/m);

    // The user's index, refs, objects and status are as they were (util.py aside).
    const after = await repoState(repo);
    assert.equal(after.cached, before.cached);
    assert.equal(after.refs, before.refs);
    assert.equal(after.head, before.head);
    assert.deepEqual(after.objects, before.objects);
    assert.deepEqual(after.index, before.index);
    assert.deepEqual(after.status.filter((l) => !l.endsWith(" util.py")), before.status);
    assert.match(after.status.join("\n"), /^1 \.M .* util\.py$/m);

    // The patch is exactly the way back to the dirty start and forward again.
    await git(repo, "apply", "-R", patchPath);
    assert.equal(await Deno.readTextFile(`${repo}/util.py`), UTIL);
    await git(repo, "apply", "--check", patchPath);
    assert.equal(await Deno.readTextFile(`${repo}/notes.txt`), "my notes\r\n\twith a tab\n");
  } finally {
    await mock.close();
  }
});

Deno.test("a run that edits a file the user had dirtied: the patch is the run's delta only", async () => {
  const repo = await repoWithUtil();
  await Deno.writeTextFile(
    `${repo}/calc.py`,
    `${"# user's note\n"}def add(a, b):\n    return a - b\n`,
  );
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]]),
    chatToolCalls([["task_done", {}]], "fixed"),
  ]);
  await using home = await tempDir("deft-home-");
  try {
    const patchPath = `${home.path}/run.patch`;
    const r = await runMocked(mock, "fix add", repo, {
      extra: ["--patch-path", patchPath, "--output-format", "json"],
      cwd: home.path,
      env: { HOME: home.path },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).files_changed, [
      { path: "calc.py", added: 1, removed: 1 },
    ]);
    const patch = await Deno.readTextFile(patchPath);
    assert.doesNotMatch(patch, /^\+# user's note/m, patch);
    assert.match(patch, /^ # user's note$/m); // context, as it was at the start
    assert.match(patch, /^\+ {4}return a \+ b$/m);
  } finally {
    await mock.close();
  }
});

Deno.test("baseline: new, deleted and changed untracked files, large files and symlinks", async () => {
  const repo = await repoWithUtil();
  await Deno.writeTextFile(`${repo}/keep.txt`, "unchanged\n");
  await Deno.writeTextFile(`${repo}/gone.txt`, "the run deletes me\n");
  await Deno.writeTextFile(`${repo}/edited.txt`, "one\n");
  await Deno.symlink("util.py", `${repo}/old-link`);
  // A large text file the user had (not stored, never reported) and a large binary.
  await Deno.writeTextFile(`${repo}/huge.log`, "line\n".repeat(4 * 1024 * 1024));
  await Deno.writeFile(`${repo}/weights.bin`, new Uint8Array(MAX_NEW_BINARY_BYTES * 2));
  const baseline = await recordBaseline(repo);
  assert.ok(baseline);
  try {
    assert.deepEqual(patchFiles(await workspacePatch(repo, { baseline })), []);
    await Deno.remove(`${repo}/gone.txt`);
    await Deno.writeTextFile(`${repo}/edited.txt`, "one\r\ntwo\t\n");
    await Deno.writeTextFile(`${repo}/new.txt`, "new\n");
    await Deno.remove(`${repo}/old-link`);
    await Deno.symlink("calc.py", `${repo}/old-link`);
    await Deno.symlink("/etc/passwd", `${repo}/new-link`);
    await Deno.writeTextFile(`${repo}/huge.log`, "more\n", { append: true });
    const patch = await workspacePatch(repo, { baseline });
    assert.deepEqual(
      patchFiles(patch),
      ["edited.txt", "gone.txt", "new-link", "new.txt", "old-link"],
      patch,
    );
    assert.match(patch, /deleted file mode 100644\nindex [0-9a-f]+\.\.0+\n--- a\/gone.txt/);
    assert.match(patch, /new file mode 120000/);
    assert.match(patch, /^\+\/etc\/passwd$/m); // the link's target, not the file it points to
    assert.doesNotMatch(patch, /root:/);
    assert.match(patch, /^\+one\r$/m);
    // Against HEAD (no baseline) the user's untracked files would all be there.
    assert.ok(patchFiles(await workspacePatch(repo)).includes("keep.txt"));
  } finally {
    baseline.dispose();
  }
  assert.equal(await Deno.stat(baseline.store).then(() => true, () => false), false);
});

for (const mode of ["none", "workspace-write"] as const) {
  Deno.test(`baseline: a hostile .git/config runs nothing while the state is recorded and diffed (sandbox ${mode})`, async () => {
    const repo = await repoWithUtil();
    // Outside /tmp: the sandbox's /tmp is private, so a marker there would go unseen.
    await using markers = await tempDir("deft-markers-", { dir: outsideTmp() });
    const planted = await new Deno.Command("sh", {
      args: ["-c", plantHostileConfig(markers.path)],
      cwd: repo,
    }).output();
    assert.ok(planted.success);
    await Deno.writeTextFile(`${repo}/calc.py`, "dirty\n");
    await Deno.writeTextFile(`${repo}/untracked.py`, "x = 1\n");
    const before = await gitFiles(repo);
    const sandbox = { mode, workspace: repo };
    const baseline = await recordBaseline(repo, { sandbox });
    assert.ok(baseline);
    try {
      await Deno.writeTextFile(`${repo}/util.py`, "changed\n");
      const patch = await workspacePatch(repo, { baseline, sandbox });
      assert.deepEqual(patchFiles(patch), ["util.py"]);
    } finally {
      baseline.dispose();
    }
    assert.deepEqual(await markersIn(markers.path), []);
    assert.deepEqual(await gitFiles(repo), before);
  });
}

Deno.test("recordBaseline outside a git repository is undefined", async () => {
  await using dir = await tempDir("deft-nogit-");
  assert.equal(await recordBaseline(dir.path), undefined);
});
