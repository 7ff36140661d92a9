/** The `ckg` tool's edge searches as the model uses them: text it reads, flags it sets. */
import assert from "node:assert/strict";
import { CkgTool } from "../../src/tools/ckg/tool.ts";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

Deno.test("ckg tool: references, callers and subclasses read like the definition searches", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir();
  await writeTree(ws.path, {
    "shop/cart.py": "from shop.tax import rate\n\n" +
      "class Error(Exception):\n    pass\n\n" +
      "class Empty(Error):\n    pass\n\n" +
      "class Gone(Empty):\n    pass\n\n" +
      "def total(items):\n    return sum(items) * rate()\n",
    "shop/tax.py": "def rate():\n    return 1.2\n",
  });
  const executor = new ToolExecutor([
    new CkgTool({ provider: "openai", workspace: ws.path, settings: { ckgDir: cache.path } }),
  ]);
  const call = (args: Record<string, unknown>) =>
    executor.executeToolCall({
      name: "ckg",
      call_id: "c",
      arguments: { path: ws.path, ...args },
    });
  try {
    let r = await call({ command: "search_callers", identifier: "rate" });
    assert.equal(r.success, true, r.error ?? "");
    assert.equal(
      r.output,
      "Found 1 functions calling rate:\n" +
        `1. ${ws.path}/shop/cart.py:12-13 function total (calls at line 13)\n` +
        "def total(items):\n    return sum(items) * rate()\n\n",
    );
    r = await call({ command: "search_references", identifier: "rate", print_body: false });
    assert.equal(
      r.output,
      "Found 2 references to rate:\n" +
        `1. ${ws.path}/shop/cart.py:1 import\n   from shop.tax import rate\n` +
        `2. ${ws.path}/shop/cart.py:13 call within function total\n` +
        "   return sum(items) * rate()\n",
    );
    r = await call({ command: "search_subclasses", identifier: "Error", print_body: false });
    assert.equal(
      r.output,
      `Found 1 classes deriving from Error:\n1. ${ws.path}/shop/cart.py:6-7 class Empty\n`,
    );
    r = await call({
      command: "search_subclasses",
      identifier: "Error",
      print_body: false,
      indirect: true,
    });
    assert.equal(
      r.output,
      "Found 2 classes deriving from Error (directly or indirectly):\n" +
        `1. ${ws.path}/shop/cart.py:6-7 class Empty\n` +
        `2. ${ws.path}/shop/cart.py:9-10 class Gone, via Empty\n`,
    );
    r = await call({ command: "search_callers", identifier: "nobody" });
    assert.equal(r.success, true);
    assert.equal(r.output, "No functions calling nobody found.");
    r = await call({ command: "search_everything", identifier: "x" });
    assert.equal(r.success, false);
  } finally {
    await executor.closeTools();
  }
});
