/**
 * Long answers page: the `ckg` tool's `offset` and `limit` show part of an answer, and the line
 * that ends a cut answer says which `offset` brings the rest.
 */
import assert from "node:assert/strict";
import { CkgTool } from "../../src/tools/ckg/tool.ts";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { OUTPUT_LIMIT } from "../../src/ckg/format.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

async function withTool(
  files: Record<string, string>,
  fn: (
    call: (args: Record<string, unknown>) => Promise<{ output?: string; error?: string }>,
    root: string,
  ) => Promise<void>,
): Promise<void> {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(ws.path, files);
  const executor = new ToolExecutor([
    new CkgTool({ provider: "openai", workspace: ws.path, settings: { ckgDir: cache.path } }),
  ]);
  try {
    await fn(
      async (args) => {
        const r = await executor.executeToolCall({
          name: "ckg",
          call_id: "c",
          arguments: { path: ws.path, ...args },
        });
        return { output: r.output ?? undefined, error: r.error ?? undefined };
      },
      ws.path,
    );
  } finally {
    await executor.closeTools();
  }
}

// 300 callers of `target`, each with a body long enough that not all of them fit: caller i
// spans lines 4 + 4i to 6 + 4i and calls on its last line.
const CALLERS: Record<string, string> = {
  "calls.py": "def target():\n    pass\n\n" +
    Array.from(
      { length: 300 },
      (_, i) => `def caller${i}():\n    # ${"x".repeat(60)}\n    return target()\n`,
    ).join("\n"),
};

Deno.test("paging: a cut answer says which offset brings the rest, and that offset brings it", async () => {
  await withTool(CALLERS, async (call, root) => {
    const first = (await call({ command: "search_callers", identifier: "target" })).output!;
    assert.ok(first.startsWith("Found 300 functions calling target:\n1. "), first.slice(0, 80));
    const m = / (\d+) more entries not shown; to see them call again with offset=(\d+) \(/.exec(
      first.slice(OUTPUT_LIMIT),
    );
    assert.ok(m, first.slice(OUTPUT_LIMIT));
    const next = Number(m[2]);
    assert.equal(Number(m[1]), 300 - next - 1);
    // The next page starts with the entry the first one cut, numbered as in the whole answer.
    const second = (await call({ command: "search_callers", identifier: "target", offset: next }))
      .output!;
    assert.ok(
      second.startsWith(
        `Found 300 functions calling target:\n${next + 1}. ${root}/calls.py:`,
      ),
      second.slice(0, 120),
    );
    assert.match(
      second,
      new RegExp(`function caller${next} \\(calls at line \\d+\\)\\ndef caller${next}\\(\\):`),
    );
  });
});

Deno.test("paging: limit shows that many entries and names the next offset; out of range says so", async () => {
  await withTool(CALLERS, async (call, root) => {
    const page = (await call({
      command: "search_callers",
      identifier: "target",
      print_body: false,
      offset: 10,
      limit: 2,
    })).output!;
    assert.equal(
      page,
      "Found 300 functions calling target:\n" +
        `11. ${root}/calls.py:44-46 function caller10 (calls at line 46)\n` +
        `12. ${root}/calls.py:48-50 function caller11 (calls at line 50)\n` +
        "<entries 11-12 of 300 shown; call again with offset=12 for the next ones (print_body=false " +
        "shortens each entry; a narrower path shortens the list)>\n",
    );
    const last = (await call({
      command: "search_references",
      identifier: "target",
      print_body: false,
      offset: 299,
    })).output!;
    assert.equal(
      last,
      "Found 300 references to target:\n" +
        `300. ${root}/calls.py:1202 call within function caller299\n   return target()\n`,
    );
    const past = (await call({ command: "search_function", identifier: "target", offset: 5 }))
      .output!;
    assert.equal(
      past,
      "Found 1 functions named target:\nNo entries from offset=5: there are 1 (offset counts from 0).",
    );
    for (const bad of [{ offset: -1 }, { offset: 1.5 }, { limit: 0 }, { offset: "two" }]) {
      const r = await call({ command: "search_callers", identifier: "target", ...bad });
      assert.equal(r.output, undefined);
      assert.match(
        r.error ?? "",
        // The executor refuses what is not an integer; the tool, integers out of range.
        /`(offset|limit)` must be (an integer|a whole number of at least [01] \(got )/,
        `${JSON.stringify(bad)}: ${r.error} / ${r.output}`,
      );
    }
  });
});
