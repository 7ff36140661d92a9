/** Messages between the main thread and the worker that hosts confined tools. */
import type { CallPlan, ToolContext, ToolExecResult } from "../base.ts";
import type { ToolDirs } from "../../policy/permissions.ts";
import type { ChildReport } from "../worker_scope.ts";

/** From the main thread to the worker. */
export type HostRequest =
  | { type: "init"; context: ToolContext; names: string[]; dirs?: ToolDirs }
  /**
   * One call of a tool the worker was given at init, its arguments validated already; `plan`
   * (how the approval gate let it through) travels beside them.
   */
  | { type: "call"; id: number; name: string; args: Record<string, unknown>; plan?: CallPlan }
  | { type: "close"; id: number; name: string | null }
  | { type: "probe"; id: number; probe: Probe };

/**
 * One direct use of a permission from inside the worker, outside any tool: the main thread's way
 * to check what the worker's Deno permissions allow (models cannot send these).
 */
export interface Probe {
  action: "read" | "write" | "fetch" | "run";
  target: string;
}

/** From the worker to the main thread. */
export type HostReply =
  | { type: "ready"; id: -1 }
  | { type: "result"; id: number; result: ToolExecResult }
  | { type: "closed"; id: number; errors: string[] }
  | { type: "probed"; id: number; outcome: string }
  /** A process group a tool started (`running`) or that ended; killed if the worker is. */
  | ChildReport;

/** The first line the sandboxed process reads: the permissions of the worker it starts. */
export interface BootMessage {
  type: "boot";
  permissions: Deno.PermissionOptionsObject;
  /**
   * The process was started with exactly `permissions` as its Deno flags, so it may serve the
   * calls itself rather than in a worker fenced the same way (relay.ts checks it holds no more).
   */
  fencedProcess?: boolean;
}
