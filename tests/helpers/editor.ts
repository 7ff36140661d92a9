/** Shared set-up for the editor tests: a temporary workspace and calls through the executor. */
import type { ToolSettings } from "../../src/tools/base.ts";
import { EditTool } from "../../src/tools/edit/tool.ts";
import { type ToolCallResult, ToolExecutor } from "../../src/tools/executor.ts";
import { tempDir } from "./temp.ts";

/** A temporary workspace with an editor and an executor bound to it. */
export interface EditFixture {
  /** Real path of the workspace. */
  ws: string;
  tool: EditTool;
  executor: ToolExecutor;
  /** One call through the executor (so arguments are validated as in production). */
  call(args: Record<string, unknown>): Promise<ToolCallResult>;
}

/** Runs `fn` with a fresh workspace, removed afterwards. */
export async function withEditor(
  fn: (f: EditFixture) => Promise<void>,
  settings: ToolSettings = {},
): Promise<void> {
  const wsTemp = await tempDir("deft-edit-test-");
  const ws = wsTemp.path;
  const tool = new EditTool({ provider: "anthropic", workspace: ws, settings });
  const executor = new ToolExecutor([tool]);
  let n = 0;
  const call = (args: Record<string, unknown>) =>
    executor.executeToolCall({ name: tool.name, call_id: `c${n++}`, arguments: args });
  try {
    await fn({ ws, tool, executor, call });
  } finally {
    await wsTemp.remove();
  }
}

/** A second temporary directory outside the workspace, removed afterwards. */
export async function withOutsideDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dirTemp = await tempDir("deft-outside-");
  const dir = dirTemp.path;
  try {
    await fn(dir);
  } finally {
    await dirTemp.remove();
  }
}

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Hidden temporary files the atomic writer may have left in `dir` (there should be none). */
export async function strayTempFiles(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.name.includes(".deft-")) names.push(e.name);
  return names;
}
