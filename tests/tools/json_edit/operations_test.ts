/** json_edit_tool: the operations and their Trae-compatible messages. */
import assert from "node:assert/strict";
import { withJsonEditor } from "../../helpers/json_editor.ts";

const USERS = `{
  "users": [
    {
      "id": 1,
      "name": "Alice",
      "age": 34
    },
    {
      "id": 2,
      "name": "Bob",
      "age": 27
    }
  ],
  "config": {
    "enabled": true,
    "version": "1.0.0"
  }
}
`;

async function json(path: string): Promise<unknown> {
  return JSON.parse(await Deno.readTextFile(path));
}

Deno.test("set: one value, only its text changes", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const r = await call({
      operation: "set",
      file_path: path,
      json_path: "$.config.enabled",
      value: false,
    });
    assert.equal(
      r.output,
      "Successfully updated 1 location(s) at JSONPath '$.config.enabled' with value: false",
    );
    assert.equal(
      await Deno.readTextFile(path),
      USERS.replace('"enabled": true', '"enabled": false'),
    );
    await call({
      operation: "set",
      file_path: path,
      json_path: "$.users[0].name",
      value: "Alicia",
    });
    assert.equal((await json(path) as { users: { name: string }[] }).users[0].name, "Alicia");
  });
});

Deno.test("set: every match of a wildcard or filter, with the count", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const all = await call({
      operation: "set",
      file_path: path,
      json_path: "$.users[*].age",
      value: 40,
    });
    assert.match(all.output!, /^Successfully updated 2 location\(s\)/);
    const filtered = await call({
      operation: "set",
      file_path: path,
      json_path: "$.users[?(@.name === 'Bob')].name",
      value: "Robert",
    });
    assert.match(filtered.output!, /^Successfully updated 1 location\(s\)/);
    assert.equal(
      await Deno.readTextFile(path),
      USERS.replace('"age": 34', '"age": 40').replace('"age": 27', '"age": 40')
        .replace('"Bob"', '"Robert"'),
    );
    const none = await call({ operation: "set", file_path: path, json_path: "$.nope", value: 1 });
    assert.equal(none.success, false);
    assert.equal(none.error, "No matches found for JSONPath: $.nope");
  });
});

Deno.test("set: objects and arrays are laid out like the file, or on one line", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    await call({
      operation: "set",
      file_path: path,
      json_path: "$.config",
      value: { enabled: true, tags: ["a", "b"], nested: {} },
    });
    assert.equal(
      await Deno.readTextFile(path),
      USERS.replace(
        `"config": {\n    "enabled": true,\n    "version": "1.0.0"\n  }`,
        `"config": {\n    "enabled": true,\n    "tags": [\n      "a",\n      "b"\n    ],\n    ` +
          `"nested": {}\n  }`,
      ),
    );
    await call({
      operation: "set",
      file_path: path,
      json_path: "$.config",
      value: { compact: [1, 2] },
      pretty_print: false,
    });
    assert.ok((await Deno.readTextFile(path)).endsWith(`\n  "config": {"compact":[1,2]}\n}\n`));
  });
});

Deno.test("set: every JSON type as the value", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("v.json", `{"v": 0}`);
    for (const value of ["text", 3.5, -2, true, false, [1, "x", null], { a: { b: [] } }]) {
      const r = await call({ operation: "set", file_path: path, json_path: "$.v", value });
      assert.equal(r.success, true, r.error ?? "");
      assert.deepEqual(await json(path), { v: value });
    }
  });
});

Deno.test("add: a new key, an element at an index, an appended element", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const key = await call({
      operation: "add",
      file_path: path,
      json_path: "$.config.mode",
      value: "fast",
    });
    assert.equal(key.output, "Successfully added value at JSONPath '$.config.mode'");
    await call({
      operation: "add",
      file_path: path,
      json_path: "$.users[2]",
      value: { id: 3, name: "Charlie" },
    });
    await call({ operation: "add", file_path: path, json_path: "$.users[0]", value: { id: 0 } });
    assert.equal(
      await Deno.readTextFile(path),
      `{
  "users": [
    {
      "id": 0
    },
    {
      "id": 1,
      "name": "Alice",
      "age": 34
    },
    {
      "id": 2,
      "name": "Bob",
      "age": 27
    },
    {
      "id": 3,
      "name": "Charlie"
    }
  ],
  "config": {
    "enabled": true,
    "version": "1.0.0",
    "mode": "fast"
  }
}
`,
    );
  });
});

Deno.test("add: Trae's errors for a missing parent and the wrong container", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const cases: [string, string][] = [
      ["$.missing.key", "Parent path not found: $.missing"],
      ["$.users.key", "Cannot add key to non-object at path: $.users"],
      ["$.config[0]", "Cannot add element to non-array at path: $.config"],
      ["$.config.enabled.x", "Cannot add key to non-object at path: $.config.enabled"],
    ];
    for (const [jsonPath, message] of cases) {
      const r = await call({ operation: "add", file_path: path, json_path: jsonPath, value: 1 });
      assert.equal(r.error, message, jsonPath);
    }
    const far = await call({
      operation: "add",
      file_path: path,
      json_path: "$.users[5]",
      value: 1,
    });
    assert.match(far.error!, /index 5 .* it has 2 element\(s\); use an index from 0 to 2/);
    const wild = await call({
      operation: "add",
      file_path: path,
      json_path: "$.users[*]",
      value: 1,
    });
    assert.match(wild.error!, /^Unsupported add operation for path type/);
    assert.equal(await Deno.readTextFile(path), USERS);
  });
});

Deno.test("add: an existing key gets its value replaced, and says so", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const r = await call({
      operation: "add",
      file_path: path,
      json_path: "$.config.enabled",
      value: 0,
    });
    assert.match(r.output!, /already existed .* its value was replaced/);
    assert.equal(await Deno.readTextFile(path), USERS.replace('"enabled": true', '"enabled": 0'));
  });
});

Deno.test("remove: elements and keys, with their commas", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const r = await call({ operation: "remove", file_path: path, json_path: "$.users[0]" });
    assert.equal(r.output, "Successfully removed 1 element(s) at JSONPath '$.users[0]'");
    await call({ operation: "remove", file_path: path, json_path: "$.config.version" });
    assert.equal(
      await Deno.readTextFile(path),
      `{
  "users": [
    {
      "id": 2,
      "name": "Bob",
      "age": 27
    }
  ],
  "config": {
    "enabled": true
  }
}
`,
    );
    const many = await call({ operation: "remove", file_path: path, json_path: "$..age" });
    assert.match(many.output!, /^Successfully removed 1 element\(s\)/);
    await call({ operation: "remove", file_path: path, json_path: "$.users[*]" });
    assert.deepEqual(await json(path), { users: [], config: { enabled: true } });
    const none = await call({ operation: "remove", file_path: path, json_path: "$.users[3]" });
    assert.equal(none.error, "No matches found for JSONPath: $.users[3]");
    const root = await call({ operation: "remove", file_path: path, json_path: "$" });
    assert.match(root.error!, /^Cannot remove the root/);
  });
});

Deno.test("remove: inline members keep the rest of their line tidy", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("inline.json", `{"a": [1, 2, 3], "b": {"x": 1, "y": 2}, "c": [4]}\n`);
    await call({ operation: "remove", file_path: path, json_path: "$.a[1]" });
    await call({ operation: "remove", file_path: path, json_path: "$.b.y" });
    await call({ operation: "remove", file_path: path, json_path: "$.c[0]" });
    assert.equal(await Deno.readTextFile(path), `{"a": [1, 3], "b": {"x": 1}, "c": []}\n`);
    await call({ operation: "remove", file_path: path, json_path: "$.a[1]" });
    await call({ operation: "add", file_path: path, json_path: "$.a[1]", value: { k: [1] } });
    await call({ operation: "add", file_path: path, json_path: "$.b.z", value: true });
    assert.equal(
      await Deno.readTextFile(path),
      `{"a": [1, {"k":[1]}], "b": {"x": 1, "z": true}, "c": []}\n`,
    );
  });
});

Deno.test("view: whole file, one match, several matches, no match", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const whole = await call({ operation: "view", file_path: path });
    assert.equal(whole.output, `JSON content of ${path}:\n${USERS}`);
    const one = await call({ operation: "view", file_path: path, json_path: "$.users[0]" });
    assert.equal(
      one.output,
      `JSONPath '$.users[0]' matches:\n{\n  "id": 1,\n  "name": "Alice",\n  "age": 34\n}`,
    );
    const many = await call({ operation: "view", file_path: path, json_path: "$.users[*].name" });
    assert.equal(
      many.output,
      `JSONPath '$.users[*].name' matches 2 locations:\n$.users[0].name: "Alice"\n` +
        `$.users[1].name: "Bob"`,
    );
    const filter = await call({
      operation: "view",
      file_path: path,
      json_path: "$.users[?(@.age > 30)].name",
    });
    assert.equal(filter.output, `JSONPath '$.users[?(@.age > 30)].name' matches:\n"Alice"`);
    const none = await call({ operation: "view", file_path: path, json_path: "$.nothing" });
    assert.equal(none.success, true);
    assert.equal(none.output, "No matches found for JSONPath: $.nothing");
    const length = await call({ operation: "view", file_path: path, json_path: "$.users.length" });
    assert.equal(length.output, "No matches found for JSONPath: $.users.length");
  });
});

Deno.test("arguments: absolute path, json_path and value are required where needed", async () => {
  await withJsonEditor(async ({ ws, call, file }) => {
    const path = await file("data.json", USERS);
    const relative = await call({ operation: "view", file_path: "data.json" });
    assert.equal(
      relative.error,
      `File path must be absolute: data.json. Maybe you meant ${ws}/data.json?`,
    );
    const noPath = await call({ operation: "set", file_path: path, value: 1 });
    assert.equal(
      noPath.error,
      "json_path parameter is required and must be a string for the 'set' operation.",
    );
    const noValue = await call({ operation: "add", file_path: path, json_path: "$.x" });
    assert.equal(noValue.error, "A 'value' parameter is required for the 'add' operation.");
    const missing = await call({ operation: "view", file_path: `${ws}/nope.json` });
    assert.equal(missing.error, `File does not exist: ${ws}/nope.json`);
    const badOp = await call({ operation: "merge", file_path: path });
    assert.match(badOp.error!, /`operation` must be one of "view", "set", "add", "remove"/);
    const badPretty = await call({ operation: "view", file_path: path, pretty_print: "yes" });
    assert.match(badPretty.error!, /`pretty_print` must be a boolean/);
    const dir = await call({ operation: "view", file_path: ws });
    assert.match(dir.error!, /^Not a regular file/);
  });
});

Deno.test("invalid JSON is reported with line and column; empty files too", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("bad.json", `{\n  "a": 1,\n  "b" 2\n}\n`);
    const r = await call({ operation: "view", file_path: path });
    assert.match(r.error!, /^Invalid JSON in file .*bad\.json: Colon expected at line 3, column 7/);
    const empty = await file("empty.json", "  \n");
    assert.match((await call({ operation: "view", file_path: empty })).error!, /^File is empty: /);
    const latin1 = await file(
      "latin1.json",
      Uint8Array.of(0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d),
    );
    assert.match((await call({ operation: "view", file_path: latin1 })).error!, /not valid UTF-8/);
  });
});

Deno.test("invalid JSONPath expressions are named in the error", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const cases: [string, RegExp][] = [
      ["users[0]", /must start with `\$`/],
      ["$.users[0", /`\[` is not closed/],
      ["$.users]", /unbalanced `\]`/],
      ["$.users.", /ends with `\.`/],
      ["$.users[?(@.name == 'x)]", /quoted name is not closed/],
      ["$.users[]", /empty brackets/],
    ];
    for (const [jsonPath, reason] of cases) {
      for (const operation of ["view", "set", "remove"]) {
        const r = await call({ operation, file_path: path, json_path: jsonPath, value: 1 });
        assert.ok(r.error!.startsWith(`Invalid JSONPath expression '${jsonPath}': `), r.error!);
        assert.match(r.error!, reason);
      }
    }
    assert.equal(await Deno.readTextFile(path), USERS);
  });
});

Deno.test("filter code never runs: RCE payloads are refused and do nothing", async () => {
  await withJsonEditor(async ({ ws, call, file }) => {
    const path = await file("data.json", USERS);
    const marker = `${ws}/pwned`;
    const g = globalThis as Record<string, unknown>;
    const payloads = [
      `$..[?(@.constructor.constructor('globalThis.__deftPwned = 1')())]`,
      `$[?(''[['constructor']][['constructor']]('globalThis.__deftPwned = 2')())]`,
      `$..[?(@.name.constructor.constructor('Deno.writeTextFileSync("${marker}", "x")')())]`,
      `$.users[?(@.__lookupGetter__('name'))]`,
      `$..[?((function(){ globalThis.__deftPwned = 3 })())]`,
      `$.users[?(@.name.constructor.constructor.call.call(null, 'globalThis.__deftPwned = 4')())]`,
    ];
    for (const payload of payloads) {
      for (const operation of ["view", "set", "remove"]) {
        const r = await call({ operation, file_path: path, json_path: payload, value: 1 });
        assert.equal(r.success, false, `${operation} ${payload} succeeded: ${r.output}`);
        assert.ok(r.error!.startsWith(`Invalid JSONPath expression '${payload}'`), r.error!);
      }
    }
    assert.equal(g.__deftPwned, undefined);
    await assert.rejects(Deno.stat(marker), Deno.errors.NotFound);
    assert.equal(await Deno.readTextFile(path), USERS);
  });
});

Deno.test("keys like __proto__ are ordinary keys", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("proto.json", `{"__proto__": {"polluted": true}, "a": 1}`);
    const r = await call({
      operation: "view",
      file_path: path,
      json_path: "$['__proto__'].polluted",
    });
    assert.equal(r.output, "JSONPath '$['__proto__'].polluted' matches:\ntrue");
    await call({ operation: "set", file_path: path, json_path: "$.a", value: 2 });
    assert.equal(await Deno.readTextFile(path), `{"__proto__": {"polluted": true}, "a": 2}`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

Deno.test("add: quoted keys, several parents at once; ~ selects names only for view", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("data.json", USERS);
    const quoted = await call({
      operation: "add",
      file_path: path,
      json_path: "$.config['dotted.key']",
      value: 1,
    });
    assert.equal(quoted.success, true, quoted.error ?? "");
    const each = await call({
      operation: "add",
      file_path: path,
      json_path: "$.users[*].active",
      value: true,
    });
    assert.equal(
      each.output,
      "Successfully added value at JSONPath '$.users[*].active' (2 locations)",
    );
    const data = await json(path) as {
      users: { active: boolean }[];
      config: Record<string, unknown>;
    };
    assert.deepEqual(data.users.map((u) => u.active), [true, true]);
    assert.equal(data.config["dotted.key"], 1);
    const names = await call({ operation: "view", file_path: path, json_path: "$.config.*~" });
    assert.match(names.output!, /"enabled"/);
    const setNames = await call({
      operation: "set",
      file_path: path,
      json_path: "$.config.*~",
      value: 1,
    });
    assert.match(setNames.error!, /selects property names/);
  });
});

Deno.test("set: the root itself", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("root.json", `// settings\n{\n  "a": 1\n}\n`);
    await call({ operation: "set", file_path: path, json_path: "$", value: { b: [1] } });
    assert.equal(await Deno.readTextFile(path), `// settings\n{\n  "b": [\n    1\n  ]\n}\n`);
  });
});

Deno.test("operations accept null as a value (the executor's validator decides what arrives)", async () => {
  const { runJsonEdit } = await import("../../../src/tools/json_edit/operations.ts");
  const bytes = new TextEncoder().encode(`{"a": 1, "b": [2]}`);
  const set = runJsonEdit(bytes, {
    operation: "set",
    shown: "/x.json",
    jsonPath: "$.a",
    value: null,
    prettyPrint: true,
  });
  assert.equal(new TextDecoder().decode(set.bytes), `{"a": null, "b": [2]}`);
  const add = runJsonEdit(bytes, {
    operation: "add",
    shown: "/x.json",
    jsonPath: "$.b[0]",
    value: null,
    prettyPrint: true,
  });
  assert.equal(new TextDecoder().decode(add.bytes), `{"a": 1, "b": [null, 2]}`);
});
