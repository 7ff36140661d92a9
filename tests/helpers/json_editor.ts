/** Shared set-up for the json_edit tests. */
import type { ToolSettings } from "../../src/tools/base.ts";
import { JsonEditTool } from "../../src/tools/json_edit/tool.ts";
import { type ToolCallResult, ToolExecutor } from "../../src/tools/executor.ts";
import { tempDir } from "./temp.ts";

/** A temporary workspace with a JSON editor bound to it. */
export interface JsonFixture {
  ws: string;
  executor: ToolExecutor;
  /** One call through the executor (arguments validated as in production). */
  call(args: Record<string, unknown>): Promise<ToolCallResult>;
  /** Writes `text` to `name` in the workspace and returns its path. */
  file(name: string, text: string | Uint8Array): Promise<string>;
}

/** Runs `fn` with a fresh workspace, removed afterwards. */
export async function withJsonEditor(
  fn: (f: JsonFixture) => Promise<void>,
  settings: ToolSettings = {},
): Promise<void> {
  const wsTemp = await tempDir("deft-json-test-");
  const ws = wsTemp.path;
  const tool = new JsonEditTool({ provider: "openai", workspace: ws, settings });
  const executor = new ToolExecutor([tool]);
  let n = 0;
  const call = (args: Record<string, unknown>) =>
    executor.executeToolCall({ name: tool.name, call_id: `c${n++}`, arguments: args });
  const file = async (name: string, text: string | Uint8Array) => {
    const path = `${ws}/${name}`;
    if (typeof text === "string") await Deno.writeTextFile(path, text);
    else await Deno.writeFile(path, text);
    return path;
  };
  try {
    await fn({ ws, executor, call, file });
  } finally {
    await wsTemp.remove();
  }
}
