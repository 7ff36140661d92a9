/**
 * The one race harness for both file editors: 500 calls, one after another, on files in a folder
 * that something keeps swapping for a symlink to a folder outside the workspace. Every call's
 * arguments are checked against its editor's declared parameters before it is sent, so every
 * call reaches the file. The race tests bring the swapper and say what must hold afterwards.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ToolSettings } from "../../src/tools/base.ts";
import { EDIT } from "../../src/tools/edit/definition.ts";
import { EditTool } from "../../src/tools/edit/tool.ts";
import { type ToolCallResult, ToolExecutor } from "../../src/tools/executor.ts";
import { JSON_EDIT } from "../../src/tools/json_edit/definition.ts";
import { JsonEditTool } from "../../src/tools/json_edit/tool.ts";
import { validateArguments } from "../../src/tools/validate.ts";

/** How many calls a race makes. */
export const RACE_CALLS = 500;

/** Text that only the files outside hold: no call may ever return it. */
export const OUTSIDE_MARKER = "OUTSIDE";

/** The raced folder's files as the race starts; `f.txt` only ever holds `A\n` or `B\n`. */
export const INSIDE_FILES: Readonly<Record<string, string>> = {
  "f.txt": "A\n",
  "g.txt": "G\n",
  "f.json": '{ "v": "A" }\n',
};

/** The same names in the folder outside, each with `OUTSIDE_MARKER`. */
export const OUTSIDE_FILES: Readonly<Record<string, string>> = {
  "f.txt": `${OUTSIDE_MARKER}-SECRET A\n`,
  "g.txt": `${OUTSIDE_MARKER}-SECRET G\n`,
  "f.json": `{ "v": "A", "secret": "${OUTSIDE_MARKER}-SECRET" }\n`,
};

/** Writes `files` (name to content) into `dir`. */
export async function writeFiles(
  dir: string,
  files: Readonly<Record<string, string>>,
): Promise<void> {
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
}

/** One call of a race: which editor, and its arguments. */
export interface EditorCall {
  tool: string;
  args: Record<string, unknown>;
}

/**
 * The `i`-th call of a race on the folder `dir`: both editors, each command that reads or writes
 * a file. `f.txt` is only toggled between A and B; inserts go to `g.txt`, creates to new names.
 */
export function raceCall(dir: string, i: number): EditorCall {
  const text = join(dir, "f.txt");
  const json = join(dir, "f.json");
  const edit = (args: Record<string, unknown>) => ({ tool: EDIT.name, args });
  const jsonEdit = (args: Record<string, unknown>) => ({ tool: JSON_EDIT.name, args });
  const calls: EditorCall[] = [
    edit({ command: "view", path: text }),
    edit({ command: "str_replace", path: text, old_str: "A", new_str: "B" }),
    jsonEdit({ operation: "view", file_path: json }),
    edit({ command: "str_replace", path: text, old_str: "B", new_str: "A" }),
    jsonEdit({ operation: "set", file_path: json, json_path: "$.v", value: "B" }),
    edit({ command: "create", path: join(dir, `new-${i}.txt`), file_text: "made\n" }),
    edit({ command: "insert", path: join(dir, "g.txt"), insert_line: 0, new_str: `line ${i}` }),
    jsonEdit({ operation: "set", file_path: json, json_path: "$.v", value: "A" }),
    jsonEdit({ operation: "view", file_path: json, json_path: "$.v" }),
    edit({ command: "view", path: text, view_range: [1, -1] }),
  ];
  return calls[i % calls.length];
}

/**
 * Makes `RACE_CALLS` calls on the folder `dir` through `call`, in order, each after asserting
 * that its arguments validate; returns the results in order.
 */
export async function raceEditors<R>(
  dir: string,
  call: (tool: string, args: Record<string, unknown>) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < RACE_CALLS; i++) {
    const { tool, args } = raceCall(dir, i);
    const definition = tool === EDIT.name ? EDIT : JSON_EDIT;
    const checked = validateArguments(tool, definition.parameters, args);
    assert.ok(checked.ok, `call ${i} has invalid arguments: ${!checked.ok && checked.error}`);
    results.push(await call(tool, args));
  }
  return results;
}

/** Both editors in this process, bound to the workspace `ws`, behind one executor. */
export function editorsIn(
  ws: string,
  settings: ToolSettings = {},
): (tool: string, args: Record<string, unknown>) => Promise<ToolCallResult> {
  const context = { provider: "anthropic" as const, workspace: ws, settings };
  const executor = new ToolExecutor([new EditTool(context), new JsonEditTool(context)]);
  let n = 0;
  return (name, args) => executor.executeToolCall({ name, call_id: `c${n++}`, arguments: args });
}

/**
 * Both editors still work once the folders hold still: files in the workspace root are created,
 * and a JSON one changed. (How many calls got through during the race is luck: a fast swapper
 * can make every one of them refuse.)
 */
export async function assertEditorsWork(
  ws: string,
  call: (
    tool: string,
    args: Record<string, unknown>,
  ) => Promise<{ success: boolean; error?: string | null }>,
): Promise<void> {
  const after = await call(EDIT.name, {
    command: "create",
    path: join(ws, "after.txt"),
    file_text: "still here\n",
  });
  assert.ok(after.success, String(after.error));
  assert.equal(await Deno.readTextFile(join(ws, "after.txt")), "still here\n");
  const path = join(ws, "after.json");
  const made = await call(EDIT.name, { command: "create", path, file_text: '{ "v": 1 }\n' });
  assert.ok(made.success, String(made.error));
  const set = await call(JSON_EDIT.name, {
    operation: "set",
    file_path: path,
    json_path: "$.v",
    value: 2,
  });
  assert.ok(set.success, String(set.error));
  assert.equal(await Deno.readTextFile(path), '{ "v": 2 }\n');
}
