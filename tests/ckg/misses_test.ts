/**
 * Definitions an earlier graph missed and Universal Ctags finds, on small hand-written sources:
 * unbound named function expressions, lambdas bound to names, C functions after a block that
 * preprocessor conditionals split. Folders left out by policy: tests/e2e/ckg/misses_test.ts.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../src/ckg/graph.ts";
import { oneBranchOnly } from "../../src/ckg/preproc.ts";
import { describeSymbol, symbolsOf, tempDir, writeTree } from "../helpers/ckg.ts";

Deno.test("misses: JavaScript named function expressions that nothing binds are functions", async () => {
  const text = `function jsonParserFactory() {
  return function jsonParser(req, res, next) { next(); };
}
ws.once("close", function close() { cleanup(); });
const bound = function innerName() {};
`;
  for (const file of ["a.js", "a.ts"]) {
    const found = (await symbolsOf(file, text)).map(describeSymbol);
    assert.deepEqual(found, [
      "function jsonParserFactory 1-3",
      "function jsonParser in jsonParserFactory 2-2",
      "function close 4-4",
      // A bound one is known by its binding's name alone.
      "function bound 5-5",
    ], file);
  }
});

Deno.test("misses: Python lambdas bound to a name are functions (methods in a class body)", async () => {
  const text = `H = lambda x: x + 1
class K:
    m = lambda self: 2
    n = 3
def outer():
    inner = lambda: 0
    return inner
`;
  assert.deepEqual((await symbolsOf("a.py", text)).map(describeSymbol), [
    "function H 1-1",
    "class K 2-4",
    "method m @K 3-3",
    "field n @K 4-4",
    "function outer 5-7",
    "function inner in outer 6-6",
  ]);
});

const SPLIT = `void put_str(int x) {
#ifdef WIN32
  if (x) {
    wide();
  } else {
#else
  {
#endif
    narrow();
  }
}

int after_one(void) { return 1; }

static int after_two(int y) {
  return y + 1;
}

#if defined(USE_X)
static int variant(int a) {
  return a;
#else
static int variant(int a, int b) {
  return a + b;
#endif
}

#if 0
int dead(void) { return 0; }
#else
int alive(void) { return 1; }
#endif
`;

Deno.test("misses: one branch of each preprocessor conditional keeps offsets and lines", () => {
  const kept = oneBranchOnly(SPLIT)!;
  assert.equal(kept.length, SPLIT.length);
  assert.equal(kept.split("\n").length, SPLIT.split("\n").length);
  assert.match(kept, /if \(x\) \{/);
  assert.doesNotMatch(kept, /#/);
  assert.doesNotMatch(kept, /int a, int b|dead/);
  assert.match(kept, /alive/);
  assert.equal(oneBranchOnly("int f(void) { return 0; }\n"), undefined);
});

Deno.test("misses: a C block split by #ifdef hides none of the functions around it", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(ws.path, { "split.c": SPLIT });
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  try {
    await graph.refresh();
    const lines = async (name: string) =>
      (await graph.lookup("search_function", name)).matches.map((m) =>
        `${m.symbol.startLine}-${m.symbol.endLine}`
      );
    // Universal Ctags: put_str 1, after_one 13, after_two 15, variant 20, alive 31.
    assert.deepEqual(await lines("put_str"), ["1-11"]);
    assert.deepEqual(await lines("after_one"), ["13-13"]);
    assert.deepEqual(await lines("after_two"), ["15-17"]);
    assert.deepEqual(await lines("variant"), ["20-26"]);
    assert.deepEqual(await lines("alive"), ["31-31"]);
    // Only the other branch of an #if 0 defines it; the graph keeps it all the same.
    assert.deepEqual(await lines("dead"), ["29-29"]);
    // The body shown is the file's own text, both branches included.
    const body = (await graph.lookup("search_function", "put_str")).matches[0].body!;
    assert.match(body, /#else\n {2}\{\n#endif/);
  } finally {
    graph.close();
  }
});
