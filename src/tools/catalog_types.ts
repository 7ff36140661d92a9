/**
 * The shape of a catalog entry, apart from the catalog itself so that each tool's definition
 * module can name its type without importing the catalog (which imports every definition).
 */
import type { CallEffect, Tool, ToolContext, ToolParameter } from "./base.ts";

/** A tool's name, description and parameters: what the model reads, without the implementation. */
export interface ToolDefinitionSource {
  readonly name: string;
  readonly description: string;
  readonly parameters: readonly ToolParameter[];
}

/**
 * Where a tool's calls run.
 * - `in-process`: in Deft's own process. Only for pure tools, which touch no file and start no
 *   process.
 * - `tool-host`: in the tool host, a worker fenced by Deno's permissions; with a sandbox, that
 *   worker runs inside bubblewrap too (the sandboxed host), where the workspace and a private
 *   temp folder are the only writable places.
 * - `cache-host`: like `tool-host`, but with a sandbox in a sandboxed host of its own, the only
 *   one that may write Deft's cache (the code graph's databases, other workspaces' among them).
 *   It writes there through Deft's own fixed paths, never through a path the model names, and
 *   its workspace is read-only; so the model's paths, raced or not, never lead a write into the
 *   cache from the editors' host, which cannot write it at all.
 * - `confines-itself`: in the permission-fenced worker even with a sandbox, because the tool
 *   starts its own sandbox for what it runs (bash starts each shell in bubblewrap).
 */
export type ToolPlacement = "in-process" | "tool-host" | "cache-host" | "confines-itself";

/** A tool implementation: built for a context, answering calls until closed. */
export type ToolClass = new (context: ToolContext) => Tool;

/** Everything Deft knows about one built-in tool. */
export interface CatalogEntry {
  readonly definition: ToolDefinitionSource;
  readonly runs: ToolPlacement;
  /**
   * What a call with these (validated) arguments does: the one place that reads the tool's
   * argument names. The approval gate, the console's diffs and `/undo` ask it. Absent, the
   * tool's calls may do anything: the approval gate asks about them in `commands` mode too.
   */
  readonly effects?: (args: Record<string, unknown>) => CallEffect;
  /**
   * The arguments of the call that takes back the latest edit of `path`, for a tool that keeps
   * an edit history (`/undo` uses it). Absent: the tool's edits cannot be undone.
   */
  readonly undo?: (path: string) => Record<string, unknown>;
  /** A successful call ends the agent's run (the done signal). */
  readonly endsRun?: boolean;
  /**
   * Seconds a call may take unless configured otherwise (else the host's default, 300 s). The
   * file editors answer in well under a second, so theirs is short: a call stuck on a slow file
   * ends soon, with an error saying so, instead of holding the host for minutes.
   */
  readonly deadline?: number;
  /**
   * The seconds after which a call with these arguments stops itself (bash's `timeout`), for a
   * tool that keeps its own time; undefined when the call does not say (the configured default
   * applies). The host's deadline is never shorter than that.
   */
  readonly ownTimeout?: (args: Record<string, unknown>) => number | undefined;
  /** Imports the implementation's module; called on the tool's first call only. */
  readonly load: () => Promise<ToolClass>;
}
