/**
 * Where tests go, checked on the tree itself (read from disk; this test starts no process).
 *
 * 1. **The tests mirror src/.** A test in `tests/P/` or `tests/e2e/P/` tests something in
 *    `src/P/`, so that folder exists. Folders with another job are listed once, in
 *    `NOT_MIRRORS` below, each with its reason.
 * 2. **Helpers live in `tests/helpers/`.** A module that is not a test (`*_test.ts`) sits in
 *    `tests/helpers/` or `tests/fixtures/`, where the next test finds it.
 * 3. **The unit tree starts no process.** A test outside `tests/e2e/` neither starts a process
 *    itself (`Deno.Command`, `Deno.run`, `node:child_process`) nor imports a test module that
 *    does, directly or through other test modules (`tests/helpers/repo.ts` runs git, `deft.ts`
 *    runs Deft, …). A process started deeper, by Deft's own code (a bash session, git through the
 *    policy), is caught when the unit tree runs: `deno task test:unit` grants no `--allow-run`,
 *    so any spawn fails there — rule 4 keeps the task that way.
 * 4. `deno task test:unit` ignores `tests/e2e/` and does not grant `--allow-run`.
 *
 * A test that spawns belongs in `tests/e2e/`, at the same place it would have in the unit tree
 * (`tests/tools/bash/x_test.ts` → `tests/e2e/tools/bash/x_test.ts`). CONTRIBUTING.md says the same.
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const TESTS = join(ROOT, "tests");

/**
 * Folders under tests/ that mirror nothing in src/, with the reason. The one list of exceptions:
 * a new entry needs a reason a reviewer accepts.
 */
const NOT_MIRRORS: { folder: string; reason: string }[] = [
  { folder: "helpers", reason: "shared helpers, used by tests of many folders" },
  { folder: "fixtures", reason: "sample repositories and files the tests read" },
  { folder: "scripts", reason: "tests of scripts/ (the installer's and the bundle's flags)" },
  { folder: "e2e/scripts", reason: "tests of scripts/ (the installer, run for real)" },
  { folder: "e2e/examples", reason: "tests of examples/ (the demo)" },
  { folder: "e2e/dist", reason: "tests of the bundle `deno task bundle` writes to dist/" },
  { folder: "e2e/bench", reason: "the latency budget, measured with bench/ (bench/budgets.ts)" },
];

/** A start of a process, in a test module's own text. */
const SPAWN = /\bDeno\s*\.\s*(Command|run)\b|\bnode:child_process\b/;

/** Relative specifiers a module imports: static, re-exported, side-effect and dynamic. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.\.?\/[^"']+)["']/g;

/** `source` without block comments and whole-line `//` comments, so prose may name a spawn. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** Every file under `dir`, as paths relative to `tests/`. */
async function walk(dir: string, out: string[] = []): Promise<string[]> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) await walk(path, out);
    else out.push(relative(TESTS, path));
  }
  return out;
}

/** The exception a path under tests/ falls in, if any. */
function exception(path: string) {
  return NOT_MIRRORS.find((e) => path === e.folder || path.startsWith(`${e.folder}/`));
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** The test files under tests/ whose folder has no counterpart in src/ (and no exception). */
async function unmirrored(files: string[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const file of files.filter((f) => f.endsWith("_test.ts"))) {
    if (exception(file)) continue;
    const folder = dirname(file) === "." ? "" : dirname(file);
    const mirrored = folder === "e2e" ? "" : folder.replace(/^e2e\//, "");
    if (!(await isDirectory(join(ROOT, "src", mirrored)))) {
      wrong.push(`tests/${file}: there is no src/${mirrored}/ for it to mirror`);
    }
  }
  return wrong;
}

/** Modules under tests/ that are not tests and sit outside tests/helpers/ and tests/fixtures/. */
function strayHelpers(files: string[]): string[] {
  return files.filter((f) =>
    /\.(ts|js|mjs|py)$/.test(f) && !f.endsWith("_test.ts") && !f.startsWith("helpers/") &&
    !f.startsWith("fixtures/")
  );
}

/**
 * The unit-tree tests (outside tests/e2e/) that start a process, each with how: its own
 * `Deno.Command` and the like, or the chain of test modules it imports down to one that does.
 */
async function spawningUnitTests(files: string[]): Promise<string[]> {
  const modules = files.filter((f) => f.endsWith(".ts") && !f.startsWith("fixtures/"));
  const text = new Map<string, string>();
  for (const f of modules) text.set(f, withoutComments(await Deno.readTextFile(join(TESTS, f))));
  const imports = (f: string) =>
    [...text.get(f)!.matchAll(IMPORT)]
      .map((m) => relative(TESTS, join(TESTS, dirname(f), m[1])))
      .filter((target) => text.has(target));
  // How a module comes to spawn: [itself] or [itself, a module it imports, …, the spawner].
  const how = new Map<string, string[] | null>();
  const chain = (f: string, seen: Set<string>): string[] | null => {
    if (how.has(f)) return how.get(f)!;
    if (seen.has(f)) return null;
    seen.add(f);
    let found: string[] | null = SPAWN.test(text.get(f)!) ? [f] : null;
    for (const target of found ? [] : imports(f)) {
      const below = chain(target, seen);
      if (below) {
        found = [f, ...below];
        break;
      }
    }
    how.set(f, found);
    return found;
  };
  const wrong: string[] = [];
  for (const f of modules) {
    if (!f.endsWith("_test.ts") || f.startsWith("e2e/")) continue;
    const found = chain(f, new Set());
    if (!found) continue;
    wrong.push(
      found.length === 1
        ? `tests/${f} starts a process itself`
        : `tests/${f} imports ${
          found.slice(1).map((m) => `tests/${m}`).join(" → ")
        }, which starts a process`,
    );
  }
  return wrong;
}

const HOW_TO_FIX = "Move the file (git mv) to the same place under tests/e2e/, or give the " +
  "folder an entry with its reason in NOT_MIRRORS (tests/test_tree_test.ts).";

Deno.test("test tree: every test's folder mirrors a folder of src/ (exceptions listed once)", async () => {
  const wrong = await unmirrored(await walk(TESTS));
  assert.deepEqual(wrong, [], `${wrong.join("\n")}\n${HOW_TO_FIX}`);
});

Deno.test("test tree: modules that are not tests live in tests/helpers/ or tests/fixtures/", async () => {
  const wrong = strayHelpers(await walk(TESTS)).map((f) => `tests/${f}`);
  assert.deepEqual(
    wrong,
    [],
    `${wrong.join("\n")}\nMove each to tests/helpers/ (git mv) and fix its importers.`,
  );
});

Deno.test("test tree: no test outside tests/e2e/ starts a process", async () => {
  const wrong = await spawningUnitTests(await walk(TESTS));
  assert.deepEqual(
    wrong,
    [],
    `${wrong.join("\n")}\nA test that starts a process (or uses a helper that does) belongs ` +
      "under tests/e2e/, at the same place it has in the unit tree (git mv).",
  );
});

Deno.test("test tree: `deno task test:unit` leaves out tests/e2e/ and grants no --allow-run", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const task: string = config.tasks["test:unit"];
  assert.ok(task, "deno.json has no test:unit task");
  assert.match(task, /--ignore=tests\/e2e\/?(\s|,|$)/, `test:unit must ignore tests/e2e/: ${task}`);
  assert.doesNotMatch(
    task,
    /--allow-run|--allow-all|(^|\s)-A(\s|$)/,
    `test:unit must not grant --allow-run, so a unit test that starts a process fails: ${task}`,
  );
});
