/**
 * The plain console of `deft run` (stderr, off a terminal): one line per call, the call shown by
 * its description's subject, as the live console shows it — not the arguments as JSON, which put
 * a whole file's text or a many-line command on one endless line.
 */
import assert from "node:assert/strict";
import { StderrConsole } from "../../src/agent/console.ts";
import type { LLMToolCall } from "../../src/llm/types.ts";
import type { ToolCallResult } from "../../src/tools/executor.ts";

/** What `run` wrote to stderr, each write decoded. */
function stderrOf(run: () => void): string {
  const original = Deno.stderr.writeSync;
  const written: string[] = [];
  const decoder = new TextDecoder();
  Deno.stderr.writeSync = (bytes: Uint8Array) => {
    written.push(decoder.decode(bytes));
    return bytes.length;
  };
  try {
    run();
  } finally {
    Deno.stderr.writeSync = original;
  }
  return written.join("");
}

const ok = (call: LLMToolCall): ToolCallResult => ({
  name: call.name,
  call_id: call.call_id,
  success: true,
  output: "",
  error: null,
  error_code: 0,
});

// A key as a provider issues it: masked wherever it is shown.
const KEY = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0";

Deno.test("the plain console shows each call by its description's subject, on one bounded line", () => {
  const calls: LLMToolCall[] = [
    { name: "bash", call_id: "1", arguments: { command: "make test" } },
    {
      name: "str_replace_based_edit_tool",
      call_id: "2",
      arguments: {
        command: "create",
        path: "notes.txt",
        file_text: `top\n${"body\n".repeat(5000)}`,
      },
    },
    {
      name: "bash",
      call_id: "3",
      arguments: { command: `curl -H 'x-api-key: ${KEY}'\n  https://example.com` },
    },
    { name: "task_done", call_id: "4", arguments: {} },
  ];
  const text = stderrOf(() => new StderrConsole().step(3, calls, calls.map(ok), ""));
  const lines = text.trimEnd().split("\n");
  assert.deepEqual(lines.slice(0, 2), [
    "[3] bash make test → ok",
    "[3] str_replace_based_edit_tool create notes.txt → ok",
  ]);
  // A command over two lines is one line; the key in it is masked.
  assert.match(lines[2], /^\[3\] bash curl -H 'x-api-key: \S+ https:\/\/example\.com → ok$/);
  assert.ok(!text.includes(KEY), "the key was shown");
  assert.equal(lines[3], "[3] task_done → ok");
  assert.equal(lines.length, 4, text);
  assert.ok(lines.every((l) => l.length <= 200), text);
});
