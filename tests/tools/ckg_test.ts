/** The `ckg` tool as the model uses it: through the executor, with Trae's messages. */
import assert from "node:assert/strict";
import { CkgTool } from "../../src/tools/ckg/tool.ts";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

async function setup() {
  const ws = await tempDir();
  const cache = await tempDir();
  await writeTree(ws.path, {
    "app/widgets.js": "export function greet(name) {\n  return `hi ${name}`;\n}\n\n" +
      "class Counter {\n  count = 0;\n  inc() {\n    this.count++;\n  }\n}\n",
    "app/notes.txt": "not code",
    "lib/util.py": "def greet():\n    pass\n",
  });
  const tool = new CkgTool({
    provider: "openai",
    workspace: ws.path,
    settings: { ckgDir: cache.path },
  });
  const executor = new ToolExecutor([tool]);
  const call = (args: unknown) =>
    executor.executeToolCall({ name: "ckg", call_id: "c1", arguments: args });
  return {
    root: ws.path,
    tool,
    call,
    async cleanup() {
      await executor.closeTools();
      await ws.remove();
      await cache.remove();
    },
  };
}

Deno.test("ckg tool: the definition is the one the model sees", () => {
  const tool = new CkgTool({ provider: "anthropic", workspace: "/", settings: {} });
  const def = tool.jsonDefinition();
  assert.equal(def.name, "ckg");
  assert.deepEqual((def.parameters as { required: string[] }).required, [
    "command",
    "path",
    "identifier",
  ]);
});

Deno.test("ckg tool: finds functions, methods and classes in Trae's format", async () => {
  const t = await setup();
  try {
    let r = await t.call({ command: "search_function", path: t.root, identifier: "greet" });
    assert.equal(r.success, true, r.error ?? "");
    assert.equal(
      r.output,
      "Found 2 functions named greet:\n" +
        `1. ${t.root}/app/widgets.js:1-3\nexport function greet(name) {\n  return \`hi \${name}\`;\n}\n\n` +
        `2. ${t.root}/lib/util.py:1-2\ndef greet():\n    pass\n\n`,
    );
    r = await t.call({
      command: "search_class_method",
      path: `${t.root}/app`,
      identifier: "inc",
      print_body: false,
    });
    assert.equal(
      r.output,
      `Found 1 class methods named inc:\n1. ${t.root}/app/widgets.js:7-9 within class Counter\n`,
    );
    r = await t.call({
      command: "search_class",
      path: "app",
      identifier: "Counter",
      print_body: null,
    });
    assert.equal(
      r.output,
      `Found 1 classes named Counter:\n1. ${t.root}/app/widgets.js:5-10\n` +
        "Fields:\n- count = 0\nMethods:\n- inc()\n" +
        "class Counter {\n  count = 0;\n  inc() {\n    this.count++;\n  }\n}\n\n",
      "a relative path is taken from the workspace; print_body null means the default",
    );
    r = await t.call({ command: "search_function", path: t.root, identifier: "gret" });
    assert.equal(r.success, true);
    assert.equal(r.output, "No functions named gret found.\nClose names: greet (function).");
  } finally {
    await t.cleanup();
  }
});

Deno.test("ckg tool: follows an edit made between two calls", async () => {
  const t = await setup();
  try {
    const before = await t.call({ command: "search_function", path: t.root, identifier: "added" });
    assert.match(before.output ?? "", /^No functions named added found\./);
    await Deno.writeTextFile(
      `${t.root}/lib/util.py`,
      "def greet():\n    pass\n\ndef added():\n    return 1\n",
    );
    const after = await t.call({ command: "search_function", path: t.root, identifier: "added" });
    assert.equal(
      after.output,
      `Found 1 functions named added:\n1. ${t.root}/lib/util.py:4-5\ndef added():\n    return 1\n\n`,
    );
  } finally {
    await t.cleanup();
  }
});

Deno.test("ckg tool: refuses paths outside the workspace and reports bad paths clearly", async () => {
  const t = await setup();
  try {
    let r = await t.call({ command: "search_function", path: "/etc", identifier: "x" });
    assert.equal(r.success, false);
    assert.match(r.error ?? "", /^The path \/etc (?:is outside|leaves) the workspace /);
    r = await t.call({ command: "search_function", path: `${t.root}/../`, identifier: "x" });
    assert.match(r.error ?? "", /(?:is outside|leaves) the workspace/);
    await Deno.symlink("/usr", `${t.root}/escape`);
    r = await t.call({ command: "search_function", path: `${t.root}/escape`, identifier: "x" });
    assert.match(r.error ?? "", /(?:is outside|leaves) the workspace .*resolves to \/usr/);
    r = await t.call({ command: "search_function", path: `${t.root}/missing`, identifier: "x" });
    assert.equal(r.error, `Codebase path ${t.root}/missing does not exist`);
    r = await t.call({
      command: "search_function",
      path: `${t.root}/app/notes.txt`,
      identifier: "x",
    });
    assert.equal(r.error, `Codebase path ${t.root}/app/notes.txt is not a directory`);
    r = await t.call({ command: "search_function", path: t.root, identifier: "  " });
    assert.equal(r.error, "No identifier provided for the ckg tool");
    r = await t.call({ command: "search_everything", path: t.root, identifier: "x" });
    assert.match(
      r.error ?? "",
      /`command` must be one of "search_function", "search_class", "search_class_method"/,
    );
  } finally {
    await t.cleanup();
  }
});

Deno.test("ckg tool: metacharacters in the identifier are only characters", async () => {
  const t = await setup();
  try {
    for (const identifier of ["%", "gr_et", "gre*", "greet' OR 1=1 --", "[g]reet"]) {
      const r = await t.call({ command: "search_function", path: t.root, identifier });
      assert.equal(r.success, true);
      assert.match(r.output ?? "", new RegExp(`^No functions named .* found\\.`), identifier);
    }
  } finally {
    await t.cleanup();
  }
});

Deno.test("ckg tool: can be used again after close", async () => {
  const t = await setup();
  try {
    await t.call({ command: "search_function", path: t.root, identifier: "greet" });
    await t.tool.close();
    const r = await t.call({ command: "search_function", path: t.root, identifier: "greet" });
    assert.match(r.output ?? "", /^Found 2 functions named greet:/);
  } finally {
    await t.cleanup();
  }
});
