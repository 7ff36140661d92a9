/**
 * Git that Deft runs from its own process (the run's patch) runs inside the sandbox when there is
 * one: real bwrap, real git. The patch writes nothing into the repository, so it also works where
 * the workspace is read-only.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { workspacePatch } from "../../../src/agent/patch.ts";
import { type GitSandbox, runGit } from "../../../src/policy/git.ts";
import { SandboxUnavailableError } from "../../../src/policy/sandbox.ts";
import { runMocked } from "../../helpers/deft.ts";
import { markersIn, plantHostileConfig } from "../../helpers/hostile_git.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { outsideTmp } from "../../helpers/places.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";

const MODES = ["workspace-write", "read-only"] as const;
// Outside /tmp: the sandbox's /tmp is private, so a marker or index there would go unseen.
const OUTSIDE = outsideTmp();

async function sh(cwd: string, script: string): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`${script}: ${new TextDecoder().decode(out.stderr)}`);
  return text;
}

/** A committed repository (text and binary files), plus a copy of its committed files. */
async function repository(): Promise<{ repo: string; base: string }> {
  const repo = await tempDirUntilExit("deft-git-sbx-");
  const base = await tempDirUntilExit("deft-git-base-");
  await sh(
    repo,
    [
      "git init -q",
      "printf 'one\\ntwo\\n' > edited.txt && echo bye > gone.txt",
      "printf '\\0\\1\\2\\3' > changed.bin",
      "git add . && git -c user.name=t -c user.email=t@t commit -qm base",
      `cp -r edited.txt gone.txt changed.bin "${base}/"`,
    ].join(" && "),
  );
  return { repo, base };
}

/** Every file under `.git` with its size and modification time. */
async function gitDirState(repo: string): Promise<string[]> {
  return (await sh(repo, "find .git -printf '%p %s %T@\\n' | sort")).split("\n");
}

async function objectCount(repo: string): Promise<number> {
  return Number((await sh(repo, "find .git/objects -type f | wc -l")).trim());
}

/** The work tree's files (not `.git`) with their contents' hashes. */
async function tree(dir: string): Promise<string> {
  return await sh(dir, "find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 md5sum");
}

for (const mode of MODES) {
  Deno.test(`git sandbox: the patch of a hostile repository (sandbox ${mode}) runs nothing and writes nothing into .git`, async () => {
    // Outside the workspace, and outside the sandbox's writable places: a marker there means a
    // planted program ran on the host.
    await using markersTemp = await tempDir("deft-git-markers-", { dir: OUTSIDE });
    const markers = markersTemp.path;
    const { repo, base } = await repository();
    try {
      await sh(repo, plantHostileConfig(markers));
      await sh(
        repo,
        [
          "printf 'one\\nTWO\\nthree\\n' > edited.txt",
          "rm gone.txt",
          "printf '\\0\\1\\2\\3\\4\\377' > changed.bin",
          "printf '\\0PNG\\r\\n' > new.bin",
          "mkdir -p 'sub dir' && echo fresh > 'sub dir/new file.txt'",
        ].join(" && "),
      );
      const objects = await objectCount(repo);
      const before = await gitDirState(repo);

      const patch = await workspacePatch(repo, { sandbox: { mode, workspace: repo } });

      assert.deepEqual(await markersIn(markers), [], "a planted program ran on the host");
      assert.equal(await objectCount(repo), objects, ".git/objects gained objects");
      assert.deepEqual(await gitDirState(repo), before, ".git changed");
      assert.match(patch, /^-two\n\+TWO\n\+three$/m);
      assert.match(patch, /^deleted file mode .*\n.*\n--- a\/gone.txt/m);
      assert.match(
        patch,
        /^diff --git a\/new.bin b\/new.bin\nnew file mode .*\n.*\nGIT binary patch/m,
      );
      assert.match(patch, /^diff --git a\/changed.bin b\/changed.bin\n.*\nGIT binary patch/m);
      assert.match(patch, /^\+fresh$/m);
      // The patch turns the committed files into the work tree, byte for byte.
      await Deno.writeTextFile(`${base}.patch`, patch);
      await sh(base, `git apply --binary "${base}.patch"`);
      assert.equal(await tree(base), await tree(repo));
    } finally {
      for (const dir of [markers, repo, base]) await Deno.remove(dir, { recursive: true });
      await Deno.remove(`${base}.patch`).catch(() => {});
    }
  });
}

Deno.test("git sandbox: runGit with a sandbox runs git in bwrap's namespaces; without, as it is", async () => {
  const { repo, base } = await repository();
  const probe = ["-c", "alias.probe=!cat /proc/1/comm; readlink /proc/self/ns/pid", "probe"];
  try {
    // Through a shell: Deno wants --allow-all to read /proc.
    const hostNs = (await sh(repo, "readlink /proc/self/ns/pid")).trim();
    const inside = await runGit(repo, probe, {
      sandbox: { mode: "workspace-write", workspace: repo },
    });
    assert.ok(inside.ok, inside.err);
    const [init, ns] = inside.out.trim().split("\n");
    assert.equal(init, "bwrap", "the first process of git's PID namespace is bwrap");
    assert.notEqual(ns, hostNs);
    for (const sandbox of [undefined, { mode: "none", workspace: repo } as GitSandbox]) {
      const plain = await runGit(repo, probe, { sandbox });
      assert.equal(plain.out.trim().split("\n")[1], hostNs, "no sandbox: the host's namespace");
    }
  } finally {
    await Deno.remove(repo, { recursive: true });
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("git sandbox: sandboxed git writes only the workspace (not in read-only) and the scratch folders given", async () => {
  const { repo, base } = await repository();
  // Outside the workspace and not in /tmp (private in the sandbox): only a bind makes it visible.
  await using outsideTemp = await tempDir("deft-git-", { dir: OUTSIDE });
  const outside = outsideTemp.path;
  const readTree = (index: string, sandbox?: GitSandbox) =>
    runGit(repo, ["read-tree", "HEAD"], { env: { GIT_INDEX_FILE: index }, sandbox });
  try {
    const writable: GitSandbox = { mode: "workspace-write", workspace: repo };
    const outsideIndex = join(outside, "index");
    const refused = await readTree(outsideIndex, writable);
    assert.equal(refused.ok, false);
    assert.match(refused.err, /Read-only file system/);
    await assert.rejects(() => Deno.stat(outsideIndex), Deno.errors.NotFound);

    assert.ok((await readTree(outsideIndex, { ...writable, writablePaths: [outside] })).ok);
    assert.ok((await Deno.stat(outsideIndex)).isFile, "a scratch folder given is writable");

    const inWorkspace = join(repo, "scratch-index");
    const readOnly = await readTree(inWorkspace, { mode: "read-only", workspace: repo });
    assert.match(readOnly.err, /Read-only file system/, "read-only: not even the workspace");
    assert.ok((await readTree(inWorkspace, writable)).ok, "workspace-write: the workspace");
    assert.ok((await readTree(join(outside, "plain-index"))).ok, "no sandbox: anywhere");
  } finally {
    for (const dir of [repo, base, outside]) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("git sandbox: without bwrap the patch fails with install instructions, never unsandboxed", async () => {
  const { repo, base } = await repository();
  try {
    await Deno.writeTextFile(`${repo}/edited.txt`, "changed\n");
    for (const mode of MODES) {
      await assert.rejects(
        () =>
          workspacePatch(repo, {
            sandbox: { mode, workspace: repo, bwrapPath: "/nonexistent/bwrap" },
          }),
        (e: unknown) =>
          e instanceof SandboxUnavailableError && /apt-get install -y bubblewrap/.test(e.message),
        mode,
      );
    }
    // `none` needs no bwrap.
    const none: GitSandbox = { mode: "none", workspace: repo, bwrapPath: "/nonexistent/bwrap" };
    assert.match(await workspacePatch(repo, { sandbox: none }), /^\+changed$/m);
  } finally {
    await Deno.remove(repo, { recursive: true });
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("git sandbox: `deft run --sandbox workspace-write --patch-path` builds the patch under bwrap", async () => {
  const { repo, base } = await repository();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  // A bwrap that logs each command line, then runs the real one.
  const bin = join(home, "bin");
  const log = join(home, "bwrap.log");
  const realBwrap = (await sh(home, "command -v bwrap")).trim();
  await Deno.mkdir(bin);
  await Deno.writeTextFile(
    join(bin, "bwrap"),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> "${log}"\nexec "${realBwrap}" "$@"\n`,
  );
  await Deno.chmod(join(bin, "bwrap"), 0o755);
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/edited.txt`,
      old_str: "two",
      new_str: "TWO",
    }]]),
    chatToolCalls([["task_done", {}]], "done"),
  ]);
  try {
    const patchPath = join(home, "run.patch");
    const r = await runMocked(mock, "edit", repo, {
      extra: ["--sandbox", "workspace-write", "--must-patch", "--patch-path", patchPath],
      cwd: home,
      env: { HOME: home, PATH: `${bin}:${Deno.env.get("PATH")}` },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(await Deno.readTextFile(patchPath), /^-two\n\+TWO$/m);
    const lines = (await Deno.readTextFile(log)).split("\n");
    // Every git command of the run (baseline, checkpoints, the check at task_done, the patch
    // written) went to long-lived sandboxes: no bwrap of its own per command. Up to two serve
    // the patch's private folders (two commands side by side), up to two may write the
    // session's checkpoint store as well.
    assert.deepEqual(lines.filter((l) => / -- git /.test(l)), []);
    const starts = lines.flatMap((l, i) => /^--die-with-parent /.test(l) ? [i] : []);
    // A start's command line (the runner's loop spans lines) runs to the next start.
    const runners = starts.filter((i, n) =>
      lines.slice(i, starts[n + 1] ?? lines.length).some((l) => / deft-git-runner /.test(l))
    );
    assert.ok(runners.length >= 1 && runners.length <= 4, lines.join("\n"));
    // The root read-only (its entries bound one by one, then made read-only).
    for (const i of runners) {
      assert.match(lines[i], /--unshare-all .*--ro-bind \/usr .*--remount-ro \/ /);
    }
  } finally {
    await mock.close();
    for (const dir of [repo, base, home]) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("git sandbox: a workspace inside a repository, or a linked worktree, in /tmp gets its patch", async () => {
  // The sandbox's /tmp is private: the repository's .git above the workspace (or the main
  // repository a worktree's .git file points to) must still be shown to git.
  const { repo, base } = await repository();
  const worktree = `${repo}-wt`;
  try {
    await sh(
      repo,
      `mkdir sub && echo a > sub/a.txt && git add sub && git -c user.name=t -c user.email=t@t commit -qm sub && git worktree add -q "${worktree}"`,
    );
    await Deno.writeTextFile(`${repo}/sub/a.txt`, "in the subfolder\n");
    await Deno.writeTextFile(`${worktree}/sub/a.txt`, "in the worktree\n");
    const cases: [string, RegExp][] = [
      [`${repo}/sub`, /^\+in the subfolder$/m],
      [worktree, /^\+in the worktree$/m],
      [`${worktree}/sub`, /^\+in the worktree$/m],
    ];
    for (const [workspace, change] of cases) {
      for (const mode of MODES) {
        const patch = await workspacePatch(workspace, { sandbox: { mode, workspace } });
        assert.match(patch, change, `${mode} ${workspace}`);
      }
    }
  } finally {
    for (const dir of [repo, base, worktree]) await Deno.remove(dir, { recursive: true });
  }
});
