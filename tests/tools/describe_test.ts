/**
 * Each built-in tool's call description (src/tools/describe.ts), as the approval preview, the
 * consoles, ACP and the report show it: the title, kind, files, command, diff source and thought
 * of ordinary calls; and for hostile arguments (missing, of the wrong type, huge, not an object,
 * a name that is not a string) a description still, one line of bounded length, never a throw.
 */
import assert from "node:assert/strict";
import { type CallDescription, CATALOG, describeCall } from "../../src/tools/catalog.ts";
import type { CallEffect } from "../../src/tools/base.ts";
import { addOutputSecrets } from "../../src/policy/secrets.ts";

const KINDS = ["edit", "read", "execute", "search", "think", "fetch", "other"];
const HUGE = "x".repeat(1_000_000) + "\n" + "y ".repeat(100_000);
const ODD_VALUES: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  Number.NaN,
  true,
  "",
  "\n\r\t\u001b[2J",
  HUGE,
  [],
  [HUGE, 3],
  {},
  { toString: "no" },
];

/** A short label of any value for an assertion's message. */
function label(value: unknown): string {
  try {
    return label(value);
  } catch {
    return typeof value;
  }
}

/** A description every consumer can show: the promised shape, bounded. */
function assertShowable(d: CallDescription, what: string): void {
  assert.equal(typeof d.title, "string", what);
  assert.equal(typeof d.subject, "string", what);
  for (const line of [d.title, d.subject]) {
    assert.ok(!/[\n\r]/.test(line), `${what}: more than one line: ${line.slice(0, 80)}`);
    assert.ok(line.length <= 200, `${what}: ${line.length} characters`);
  }
  assert.ok(KINDS.includes(d.kind), `${what}: kind ${d.kind}`);
  assert.ok(Array.isArray(d.locations), what);
  for (const l of d.locations) {
    assert.equal(typeof l.path, "string", what);
    assert.notEqual(l.path, "", what);
    if (l.line !== undefined) assert.ok(Number.isInteger(l.line) && l.line >= 1, what);
  }
  if (d.command !== undefined) assert.equal(typeof d.command, "string", what);
  if (d.diff) {
    assert.equal(typeof d.diff.path, "string", what);
    assert.notEqual(d.diff.path, "", what);
    for (const before of [null, "", "a\nb\n"]) {
      const after: string | undefined = d.diff.after?.(before);
      assert.ok(after === undefined || typeof after === "string", what);
    }
  }
  if (d.thought) {
    assert.ok(d.thought.text.length <= 300 && !d.thought.text.includes("\n"), what);
    assert.equal(typeof d.thought.more, "boolean", what);
  }
}

Deno.test("describe: every tool gives a showable description for any arguments", () => {
  for (const entry of CATALOG) {
    const name = entry.definition.name;
    const params = entry.definition.parameters.map((p) => p.name);
    assertShowable(describeCall(name, {}), `${name} {}`);
    for (const value of ODD_VALUES) {
      for (const param of params) {
        assertShowable(describeCall(name, { [param]: value }), `${name} ${param}=${label(value)}`);
      }
      // Every parameter odd at once, with each command the tools know.
      const all = Object.fromEntries(params.map((p) => [p, value]));
      for (const command of ["view", "create", "str_replace", "insert", "undo_edit", "set"]) {
        assertShowable(
          describeCall(name, { ...all, command, operation: command }),
          `${name} ${command} all=${label(value)}`,
        );
      }
    }
    for (const args of [null, undefined, "not json {", HUGE, [1, 2], 7, true]) {
      assertShowable(describeCall(name, args), `${name} args=${label(args)}`);
    }
  }
});

Deno.test("describe: a name that is not a string, or no tool's, is shown as the call was made", () => {
  const names: unknown[] = [
    9,
    null,
    undefined,
    {},
    { toString: "no" },
    "x".repeat(10_000),
    "mcp__srv__query",
  ];
  for (const name of names) {
    const d = describeCall(name, { query: HUGE, n: 10n });
    assertShowable(d, `name ${label(name)}`);
    assert.equal(d.kind, "other");
    assert.equal(d.diff, undefined);
  }
  const d = describeCall("mcp__srv__query", { query: "select 1" });
  assert.equal(d.title, 'mcp__srv__query {"query":"select 1"}');
  assert.equal(d.subject, '{"query":"select 1"}');
});

Deno.test("describe: bash shows its command line, whole in `command`, on one line in the title", () => {
  const d = describeCall("bash", { command: "make test" });
  assert.deepEqual(
    { title: d.title, subject: d.subject, kind: d.kind, command: d.command, saysAll: d.saysAll },
    {
      title: "$ make test",
      subject: "make test",
      kind: "execute",
      command: "make test",
      saysAll: true,
    },
  );
  const long = describeCall("bash", { command: "cd src &&\n  make  test\n", timeout: 30 });
  assert.equal(long.title, "$ cd src && make test");
  assert.equal(long.command, "cd src &&\n  make  test\n");
  assert.ok(!long.saysAll, "a timeout and a second line are not in the title");
  assert.ok(!describeCall("bash", { command: "ls", timeout: 5 }).saysAll);
  const huge = describeCall("bash", { command: HUGE });
  assert.equal(huge.command, HUGE);
  assert.ok(huge.title.endsWith("…") && !huge.saysAll);
  assert.equal(describeCall("bash", { restart: true }).kind, "other");
  assert.equal(describeCall("bash", { command: 5 }).command, undefined);
  // Case and underscores in the name are ignored, as the executor ignores them.
  assert.equal(describeCall("Bash", { command: "ls" }).title, "$ ls");
});

Deno.test("describe: the editor's edits carry their file, the change as asked and the text after", () => {
  const create = describeCall("str_replace_based_edit_tool", {
    command: "create",
    path: "/w/new.py",
    file_text: "print(1)\n",
  });
  assert.equal(create.title, "create /w/new.py");
  assert.equal(create.kind, "edit");
  assert.deepEqual(create.locations, [{ path: "/w/new.py" }]);
  assert.deepEqual(create.diff?.change, { kind: "create", text: "print(1)\n" });
  assert.equal(create.diff?.after?.(null), "print(1)\n");

  const replace = describeCall("str_replace_based_edit_tool", {
    command: "str_replace",
    path: "a.py",
    old_str: "a - b",
    new_str: "a + b",
  });
  assert.equal(replace.diff?.path, "a.py");
  assert.deepEqual(replace.diff?.change, { kind: "replace", old: "a - b", new: "a + b" });
  assert.equal(replace.diff?.after?.("return a - b\n"), "return a + b\n");
  assert.equal(replace.diff?.after?.("no match\n"), undefined, "the editor would refuse it");
  assert.equal(replace.diff?.after?.("a - b a - b"), undefined, "twice: the editor refuses");

  const insert = describeCall("str_replace_based_edit_tool", {
    command: "insert",
    path: "/w/a.py",
    insert_line: 1,
    new_str: "x = 1",
  });
  assert.deepEqual(insert.locations, [{ path: "/w/a.py", line: 2 }]);
  assert.deepEqual(insert.diff?.change, { kind: "insert", afterLine: 1, text: "x = 1" });
  assert.equal(insert.diff?.after?.("a\nb"), "a\nx = 1\nb");
  const badLine = describeCall("str_replace_based_edit_tool", {
    command: "insert",
    path: "/w/a.py",
    insert_line: "1; rm -rf /",
    new_str: "x",
  });
  assert.equal(badLine.diff?.change, undefined);
  assert.deepEqual(badLine.locations, [{ path: "/w/a.py" }]);

  const view = describeCall("str_replace_based_edit_tool", {
    command: "view",
    path: "/w/a.py",
    view_range: [10, 20],
  });
  assert.equal(view.kind, "read");
  assert.equal(view.diff, undefined);
  assert.deepEqual(view.locations, [{ path: "/w/a.py", line: 10 }]);

  const undo = describeCall("str_replace_based_edit_tool", { command: "undo_edit", path: "/w/a" });
  assert.equal(undo.kind, "edit");
  assert.deepEqual(undo.diff, { path: "/w/a" }, "a diff from disk, no preview");

  const nowhere = describeCall("str_replace_based_edit_tool", { command: "create", file_text: "" });
  assert.equal(nowhere.diff, undefined, "no path: no file to show");
  assert.deepEqual(nowhere.locations, []);
  assert.equal(
    describeCall("str_replace_based_edit_tool", { command: "rm", path: "/w/a" }).kind,
    "other",
  );
});

Deno.test("describe: the JSON editor, the code graph, thoughts and the done signal", () => {
  const set = describeCall("json_edit_tool", {
    operation: "set",
    file_path: "/w/a.json",
    json_path: "$.x",
    value: 1,
  });
  assert.equal(set.subject, "set /w/a.json $.x");
  assert.equal(set.kind, "edit");
  assert.deepEqual(set.diff, { path: "/w/a.json" });
  assert.equal(describeCall("json_edit_tool", { operation: "view", file_path: "/a" }).kind, "read");

  const search = describeCall("ckg", {
    command: "search_function",
    path: "/w",
    identifier: "main",
  });
  assert.equal(search.title, "search_function main in /w");
  assert.equal(search.kind, "search");
  assert.deepEqual(search.locations, [{ path: "/w" }]);

  const thought = describeCall("sequentialthinking", {
    thought: "first\nlook at the tests",
    next_thought_needed: true,
    thought_number: 1,
    total_thoughts: 3,
  });
  assert.equal(thought.kind, "think");
  assert.equal(thought.title, "thought 1 of 3");
  assert.deepEqual(thought.thought, { text: "first look at the tests", more: true });
  const last = describeCall("sequentialthinking", {
    thought: HUGE,
    next_thought_needed: false,
    thought_number: 3,
    total_thoughts: 3,
  });
  assert.equal(last.thought?.more, false);
  assert.equal(last.thought?.text.length, 300);

  const done = describeCall("task_done", {});
  assert.equal(done.kind, "other");
  assert.ok(done.saysAll);
});

Deno.test("describe: a tool outside the catalog is shown by what it says it does", () => {
  const edit: CallEffect = {
    kind: "edit",
    path: "/w/a.txt",
    summary: "",
    after: (before) => (before ?? "") + "!",
  };
  const d = describeCall("mcp__fs__append", { file: "/w/a.txt" }, edit);
  assert.equal(d.kind, "edit");
  assert.equal(d.diff?.path, "/w/a.txt");
  assert.equal(d.diff?.after?.("hi"), "hi!");
  const throwing: CallEffect = {
    kind: "edit",
    path: "/w/a.txt",
    summary: "",
    after: () => {
      throw new Error("boom");
    },
  };
  assert.equal(describeCall("mcp__x", {}, throwing).diff?.after?.("hi"), undefined);
  const run = describeCall("mcp__sh__run", { cmd: "ls" }, { kind: "command", command: "ls -la" });
  assert.deepEqual([run.kind, run.title, run.command], ["execute", "$ ls -la", "ls -la"]);
  assert.equal(describeCall("mcp__q", {}, { kind: "read" }).kind, "read");
});

Deno.test("describe: a title or subject cut short never ends in part of a secret", () => {
  const secret = "tr0ub4dor-and-3-more-words-9";
  addOutputSecrets([secret]);
  for (let pad = 100; pad < 200; pad += 3) {
    for (const key of [secret, "sk-ant-" + "Z".repeat(48), "ghp_" + "k".repeat(36)]) {
      const command = `curl ${"a".repeat(pad)} ${key} -o out`;
      const edit = { command: "create", path: `/w/${"d".repeat(pad)}/${key}`, file_text: "" };
      for (
        const d of [
          describeCall("bash", { command }),
          describeCall("str_replace_based_edit_tool", edit),
        ]
      ) {
        for (const shown of [d.title, d.subject]) {
          assert.ok(!/tr0ub4dor|sk-ant-Z|ghp_k/.test(shown), `${pad}: ${shown}`);
        }
      }
    }
  }
  // Text that is not cut loses nothing but its secrets.
  assert.equal(describeCall("bash", { command: `echo ${secret}` }).title, "$ echo ***");
});

Deno.test("describe: web_fetch shows the address fetched, a token in it masked", () => {
  const d = describeCall("web_fetch", {
    url: "https://docs.example/page?key=sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
  });
  assert.equal(d.kind, "fetch");
  assert.match(d.title, /^fetch https:\/\/docs\.example\/page/);
  assert.doesNotMatch(d.title, /AbCdEfGhIjKlMnOp/);
});
