import assert from "node:assert/strict";
import { LiveConsole, mainArgument } from "../../../../src/cli/console/live.ts";
import { addOutputSecrets } from "../../../../src/policy/secrets.ts";
import { printable } from "../../../../src/cli/console/printable.ts";
import { useColor } from "../../../../src/cli/console/style.ts";
import { tempDir } from "../../../helpers/temp.ts";

function captured(color: boolean, workspace = "/nonexistent") {
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  const console = new LiveConsole({
    color,
    live: false,
    workspace,
    write: (bytes) => chunks.push(decoder.decode(bytes)),
  });
  return { console, text: () => chunks.join("") };
}

Deno.test("hostile escape sequences from the model or a tool never reach the terminal", () => {
  const { console, text } = captured(true);
  const evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m\rrewritten";
  console.waiting(1);
  console.text(`hello ${evil}`);
  const call = { call_id: "c1", name: "bash", arguments: { command: `echo ${evil}` } };
  console.calling(1, [call]);
  console.step(1, [call], [{
    name: "bash",
    call_id: "c1",
    success: false,
    output: `out ${evil}`,
    error: `err ${evil}`,
    error_code: 1,
  }], "");
  console.note(`note ${evil}`);
  const out = text();
  // Only the console's own colour codes (SGR ending in m, with known parameters) remain.
  // deno-lint-ignore no-control-regex
  const escapes = out.match(/\x1b\[[0-9;]*[A-Za-z]|\x1b[^[]/g) ?? [];
  // deno-lint-ignore no-control-regex
  for (const e of escapes) assert.match(e, /^\x1b\[(1|2|22|3\d|39)m$/, JSON.stringify(e));
  assert.ok(!out.includes("\x9b") && !out.includes("\x07") && !out.includes("\r"));
  assert.match(out, /␛\]0;pwned/);
});

Deno.test("printable keeps newlines and tabs, shows other controls", () => {
  assert.equal(printable("a\tb\nc"), "a\tb\nc");
  assert.equal(printable("\x1b[31mred"), "␛[31mred");
  assert.equal(printable("x\x00y"), "x�y");
});

Deno.test("an edit inside the workspace is shown as a diff of what changed on disk", async () => {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  await Deno.writeTextFile(`${workspace}/a.txt`, "one\ntwo\nthree\n");
  const { console, text } = captured(true, workspace);
  const call = {
    call_id: "e1",
    name: "str_replace_based_edit_tool",
    arguments: { command: "str_replace", path: `${workspace}/a.txt`, old_str: "two", new_str: "2" },
  };
  console.calling(1, [call]);
  await Deno.writeTextFile(`${workspace}/a.txt`, "one\n2\nthree\n");
  console.step(1, [call], [{
    name: call.name,
    call_id: "e1",
    success: true,
    output: "edited",
    error: null,
    error_code: 0,
  }], "");
  const out = text();
  assert.ok(out.includes("\x1b[31m-two\x1b[39m"), out);
  assert.ok(out.includes("\x1b[32m+2\x1b[39m"), out);
  assert.match(out, /a\.txt/);
});

Deno.test("no diff is read for a file outside the workspace", async () => {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  await using outsideDir = await tempDir();
  const outside = `${outsideDir.path}/file`;
  await Deno.writeTextFile(outside, "secret\n");
  const { console, text } = captured(false, workspace);
  const call = {
    call_id: "e2",
    name: "str_replace_based_edit_tool",
    arguments: { command: "create", path: outside, file_text: "x" },
  };
  console.calling(1, [call]);
  console.step(1, [call], [{
    name: call.name,
    call_id: "e2",
    success: true,
    output: null,
    error: null,
    error_code: 0,
  }], "");
  assert.doesNotMatch(text(), /secret/);
});

Deno.test("main arguments and colour choice", () => {
  assert.equal(
    mainArgument({ call_id: "", name: "bash", arguments: { command: "ls  -la\n" } }),
    "ls -la",
  );
  assert.equal(
    mainArgument({
      call_id: "",
      name: "json_edit_tool",
      arguments: { operation: "set", file_path: "/w/a.json", json_path: "$.x" },
    }),
    "set /w/a.json $.x",
  );
  assert.equal(useColor("always", false), true);
  assert.equal(useColor("never", true), false);
  assert.equal(useColor("auto", false), false);
});

Deno.test("a failed command shows its last lines, stderr last, under the count folded above", () => {
  const { console, text } = captured(false);
  const call = { call_id: "f1", name: "bash", arguments: { command: "make test" } };
  console.calling(1, [call]);
  const stdout = Array.from({ length: 20 }, (_, i) => `test ${i + 1} ok`).join("\n") + "\n";
  console.step(1, [call], [{
    name: "bash",
    call_id: "f1",
    success: false,
    output: stdout,
    error: "Traceback (most recent call last):\nValueError: the real reason\n",
    error_code: 2,
  }], "");
  const out = text();
  assert.match(out, /✗ failed \(exit 2\)\n {4}│ … 14 line\(s\) above\n {4}│ test 15 ok\n/);
  assert.match(
    out,
    /│ test 20 ok\n {4}│ Traceback \(most recent call last\):\n {4}│ ValueError: the real reason\n$/,
  );
  assert.doesNotMatch(out, /test 1 ok/);
});

Deno.test("a tool's refusal (no output, no exit code) is shown whole", () => {
  const { console, text } = captured(false);
  const call = {
    call_id: "f2",
    name: "str_replace_based_edit_tool",
    arguments: { command: "view" },
  };
  console.calling(1, [call]);
  console.step(1, [call], [{
    name: call.name,
    call_id: "f2",
    success: false,
    output: null,
    error: "The path /x does not exist.",
    error_code: -1,
  }], "");
  assert.match(text(), /✗ failed\n {4}│ The path \/x does not exist\.\n$/);
});

Deno.test("a call's line cut to the terminal's width never shows part of a secret", () => {
  const secret = "correct-horse-battery-staple-4242";
  addOutputSecrets([secret]);
  const { console, text } = captured(false);
  // The line is cut at 100 characters, in the middle of the secret; and a token shape too.
  for (const pad of [60, 80, 90]) {
    for (const key of [secret, "sk-proj-" + "Q".repeat(40)]) {
      const call = { call_id: `s${pad}`, name: "bash", arguments: { command: "" } };
      call.arguments.command = `echo ${"a".repeat(pad)} ${key} done`;
      console.calling(1, [call]);
    }
  }
  const out = text();
  assert.ok(!/correct-horse|sk-proj-Q/.test(out), out);
});
