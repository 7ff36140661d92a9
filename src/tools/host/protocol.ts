/** Messages between the main thread and the worker that hosts confined tools. */
import type { ToolContext } from "../base.ts";
import type { ToolCall, ToolCallResult } from "../executor.ts";

/** From the main thread to the worker. */
export type HostRequest =
  | { type: "init"; context: ToolContext; names: string[] }
  | { type: "call"; id: number; call: ToolCall }
  | { type: "close"; id: number; name: string | null };

/** From the worker to the main thread. */
export type HostReply =
  | { type: "ready"; id: -1 }
  | { type: "result"; id: number; result: ToolCallResult }
  | { type: "closed"; id: number; errors: string[] }
  /** A process group a tool started (`running`) or that ended; killed if the worker is. */
  | { type: "child"; id: -1; pid: number; running: boolean };
