/**
 * The patch a run leaves (`workspacePatch`, `--must-patch`, `--patch-path`).
 *
 * Promises of the patch, each with the test that guards it (here unless a file is named):
 * - what tests and editors drop is left out: "a run that ran Python's tests leaves no __pycache__
 *   …" and "isDropping knows caches, editor litter and Deft's temp files"
 * - new small files are in, large binaries out: "workspacePatch: new small files in, large
 *   binaries and droppings out"
 * - .gitignore is honoured, tracked deletions are in: "workspacePatch still honours .gitignore …"
 * - `--must-patch` outside a git repository is refused at start: "--must-patch outside a git
 *   repository is refused at start"
 * - a new symlink to a large file stays in the patch, as a link: checkpoint_promises_test.ts
 *   "patch: a new symlink to a large file stays in the patch, as a link"
 * - the patch's git runs inside the sandbox: checkpoint_promises_test.ts "patch: with a sandbox, a
 *   git first on PATH …"; tests/e2e/policy/git_sandbox_test.ts "git sandbox: the patch of a
 *   hostile repository …"; without bwrap it fails with install instructions, never unsandboxed:
 *   git_sandbox_test.ts "git sandbox: without bwrap …"
 * - a hostile repository cannot hang or pollute it: patch_hostile_test.ts (FIFOs as .gitignore,
 *   as excludes files or as .git; a git that never returns; output past the limit; a split index;
 *   a file name that is not UTF-8; a path holding ':')
 */
import assert from "node:assert/strict";
import { MAX_NEW_BINARY_BYTES, workspacePatch } from "../../../src/agent/patch.ts";
import { isDropping } from "../../../src/agent/droppings.ts";
import { runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("a run that ran Python's tests leaves no __pycache__ in its patch (no .gitignore)", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]]),
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "create",
      path: `${repo}/test_calc.py`,
      file_text: "import calc\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n",
    }]]),
    chatToolCalls([["bash", {
      command:
        `cd ${repo} && env -u PYTHONDONTWRITEBYTECODE python3 -c 'import test_calc; test_calc.test_add()' && ` +
        "mkdir -p .pytest_cache && touch .DS_Store && ls __pycache__",
    }]]),
    chatToolCalls([["task_done", {}]], "fixed"),
  ]);
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  try {
    const patchPath = `${home}/fix.patch`;
    const r = await runMocked(mock, "fix add", repo, {
      extra: ["--must-patch", "--patch-path", patchPath],
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    // The tools really left droppings behind...
    assert.ok([...Deno.readDirSync(`${repo}/__pycache__`)].some((e) => e.name.endsWith(".pyc")));
    const patch = await Deno.readTextFile(patchPath);
    // ...but the patch holds only the change and the new test.
    assert.ok(patch.includes("+    return a + b"), patch);
    assert.match(patch, /diff --git a\/test_calc.py b\/test_calc.py/);
    assert.doesNotMatch(patch, /__pycache__|\.pyc|\.DS_Store|pytest_cache/);
  } finally {
    await mock.close();
  }
});

Deno.test("workspacePatch: new small files in, large binaries and droppings out", async () => {
  const repo = await makeBuggyRepo();
  await Deno.writeFile(`${repo}/icon.bin`, new Uint8Array([0, 1, 2, 3]));
  await Deno.writeFile(`${repo}/model.bin`, new Uint8Array(MAX_NEW_BINARY_BYTES + 1));
  await Deno.writeTextFile(`${repo}/big.txt`, "x\n".repeat(MAX_NEW_BINARY_BYTES));
  await Deno.mkdir(`${repo}/node_modules/left`, { recursive: true });
  await Deno.writeTextFile(`${repo}/node_modules/left/index.js`, "1\n");
  await Deno.writeTextFile(`${repo}/.deft-0a1b2c3d4e5f.tmp`, "half-written\n");
  await Deno.writeTextFile(`${repo}/notes.md`, "hello\n");
  const patch = await workspacePatch(repo);
  const files = [...patch.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1]).sort();
  assert.deepEqual(files, ["big.txt", "icon.bin", "notes.md"]);
});

Deno.test("workspacePatch still honours .gitignore and includes tracked deletions", async () => {
  const repo = await makeBuggyRepo();
  await Deno.writeTextFile(`${repo}/.gitignore`, "secret.txt\n");
  await Deno.writeTextFile(`${repo}/secret.txt`, "nope\n");
  await Deno.remove(`${repo}/check.py`);
  const patch = await workspacePatch(repo);
  assert.match(patch, /deleted file mode/);
  assert.match(patch, /\+secret.txt/); // the new .gitignore itself
  assert.doesNotMatch(patch, /\+nope/);
});

Deno.test("isDropping knows caches, editor litter and Deft's temp files", () => {
  for (const p of ["a/__pycache__/x.cpython-312.pyc", "x.pyc", ".DS_Store", "w/.DS_Store"]) {
    assert.ok(isDropping(p), p);
  }
  for (
    const p of [
      "node_modules/a.js",
      ".pytest_cache/v/x",
      ".deft-0a1b2c3d4e5f.tmp",
      ".deft-00112233aabb.bak",
      "b.py~",
    ]
  ) {
    assert.ok(isDropping(p), p);
  }
  for (const p of ["src/app.py", "pycache.md", "node_modules.md", "docs/tmp.txt"]) {
    assert.ok(!isDropping(p), p);
  }
});

Deno.test("--must-patch outside a git repository is refused at start", async () => {
  await using dirTemp = await tempDir("deft-nogit-");
  const dir = dirTemp.path;
  const mock = MockLLM.start([]);
  try {
    const r = await runMocked(mock, "task", dir, {
      model: "m",
      extra: ["--must-patch"],
      cwd: dir,
      env: { HOME: dir },
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--must-patch needs a git repository/);
    assert.match(r.stderr, new RegExp(dir));
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});
