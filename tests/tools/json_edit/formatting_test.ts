/** json_edit keeps a file's formatting: only the edited values' text changes. */
import assert from "node:assert/strict";
import { withJsonEditor } from "../../helpers/json_editor.ts";

const TSCONFIG = `{
  // Compiler settings for the app.
  "compilerOptions": {
    "target": "es2020", // bump with care
    /* strictness */
    "strict": true,
    "paths": { "@/*": ["src/*"] },
  },
  "include": [
    "src",
    "tests", // keep tests type-checked
  ],
}
`;

Deno.test("JSONC: comments and trailing commas survive set, add and remove", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("tsconfig.json", TSCONFIG);
    await call({
      operation: "set",
      file_path: path,
      json_path: "$.compilerOptions.target",
      value: "es2022",
    });
    await call({
      operation: "add",
      file_path: path,
      json_path: "$.compilerOptions.lib",
      value: ["dom"],
    });
    await call({ operation: "add", file_path: path, json_path: "$.include[2]", value: "bench" });
    await call({ operation: "remove", file_path: path, json_path: "$.compilerOptions.strict" });
    assert.equal(
      await Deno.readTextFile(path),
      `{
  // Compiler settings for the app.
  "compilerOptions": {
    "target": "es2022", // bump with care
    /* strictness */
    "paths": { "@/*": ["src/*"] },
    "lib": [
      "dom"
    ],
  },
  "include": [
    "src",
    "tests", // keep tests type-checked
    "bench",
  ],
}
`,
    );
  });
});

Deno.test("JSONC: removing the last member drops the separator comma, keeps neighbours' comments", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file(
      "c.jsonc",
      `{\n  "a": 1, // one\n  "b": 2 // two\n}\n`,
    );
    await call({ operation: "remove", file_path: path, json_path: "$.b" });
    assert.equal(await Deno.readTextFile(path), `{\n  "a": 1 // one\n}\n`);
    await call({ operation: "add", file_path: path, json_path: "$.c", value: 3 });
    assert.equal(await Deno.readTextFile(path), `{\n  "a": 1, // one\n  "c": 3\n}\n`);
  });
});

Deno.test("tabs-indented JSON keeps tabs, in inserted objects too", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("tabs.json", `{\n\t"name": "x",\n\t"deps": {\n\t\t"a": "1"\n\t}\n}\n`);
    await call({
      operation: "add",
      file_path: path,
      json_path: "$.deps.b",
      value: { v: "2", o: [1] },
    });
    await call({ operation: "set", file_path: path, json_path: "$.name", value: "y" });
    assert.equal(
      await Deno.readTextFile(path),
      `{\n\t"name": "y",\n\t"deps": {\n\t\t"a": "1",\n\t\t"b": {\n\t\t\t"v": "2",\n\t\t\t"o": [\n` +
        `\t\t\t\t1\n\t\t\t]\n\t\t}\n\t}\n}\n`,
    );
  });
});

Deno.test("four-space indentation is detected and used", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("four.json", `{\n    "a": {\n        "b": 1\n    }\n}`);
    await call({ operation: "add", file_path: path, json_path: "$.c", value: { d: [true] } });
    assert.equal(
      await Deno.readTextFile(path),
      `{\n    "a": {\n        "b": 1\n    },\n    "c": {\n        "d": [\n            true\n` +
        `        ]\n    }\n}`,
    );
  });
});

Deno.test("CRLF line breaks, a BOM and a missing final newline are kept", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const text = `{\r\n  "a": 1,\r\n  "list": [\r\n    1\r\n  ]\r\n}`;
    const bom = [0xef, 0xbb, 0xbf];
    const path = await file("crlf.json", Uint8Array.of(...bom, ...new TextEncoder().encode(text)));
    await call({ operation: "add", file_path: path, json_path: "$.b", value: { x: 1 } });
    await call({ operation: "add", file_path: path, json_path: "$.list[0]", value: 0 });
    await call({ operation: "remove", file_path: path, json_path: "$.a" });
    const expected =
      `{\r\n  "list": [\r\n    0,\r\n    1\r\n  ],\r\n  "b": {\r\n    "x": 1\r\n  }\r\n}`;
    assert.deepEqual(
      await Deno.readFile(path),
      Uint8Array.of(...bom, ...new TextEncoder().encode(expected)),
    );
  });
});

Deno.test("one-line files stay on one line; pretty_print false keeps inserts compact", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("min.json", `{"a":{"b":[1,2]},"c":true}`);
    await call({ operation: "add", file_path: path, json_path: "$.a.d", value: { e: [1, 2] } });
    await call({ operation: "add", file_path: path, json_path: "$.a.b[2]", value: 3 });
    assert.equal(await Deno.readTextFile(path), `{"a":{"b":[1,2,3],"d":{"e":[1,2]}},"c":true}`);
    const pretty = await file("pretty.json", `{\n  "a": [\n    1\n  ]\n}\n`);
    await call({
      operation: "add",
      file_path: pretty,
      json_path: "$.b",
      value: { k: [1, 2] },
      pretty_print: false,
    });
    assert.equal(
      await Deno.readTextFile(pretty),
      `{\n  "a": [\n    1\n  ],\n  "b": {"k":[1,2]}\n}\n`,
    );
  });
});

Deno.test("adding to empty containers", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("e.json", `{\n  "o": {},\n  "l": []\n}\n`);
    await call({ operation: "add", file_path: path, json_path: "$.o.k", value: 1 });
    await call({ operation: "add", file_path: path, json_path: "$.l[0]", value: "x" });
    assert.equal(
      await Deno.readTextFile(path),
      `{\n  "o": {\n    "k": 1\n  },\n  "l": [\n    "x"\n  ]\n}\n`,
    );
    const root = await file("root.json", "{}");
    await call({ operation: "add", file_path: root, json_path: "$.a", value: 1 });
    assert.equal(await Deno.readTextFile(root), `{"a": 1}`);
  });
});

Deno.test("the file's mode is kept and no temporary file is left", async () => {
  await withJsonEditor(async ({ ws, call, file }) => {
    const path = await file("m.json", `{"a": 1}\n`);
    await Deno.chmod(path, 0o640);
    await call({ operation: "set", file_path: path, json_path: "$.a", value: 2 });
    assert.equal((await Deno.stat(path)).mode! & 0o7777, 0o640);
    const names = [];
    for await (const e of Deno.readDir(ws)) names.push(e.name);
    assert.deepEqual(names, ["m.json"]);
  });
});

Deno.test("view leaves the file untouched, byte for byte", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("tsconfig.json", TSCONFIG);
    const before = await Deno.stat(path);
    await call({ operation: "view", file_path: path, json_path: "$.include" });
    assert.equal(await Deno.readTextFile(path), TSCONFIG);
    assert.equal((await Deno.stat(path)).mtime?.getTime(), before.mtime?.getTime());
  });
});
