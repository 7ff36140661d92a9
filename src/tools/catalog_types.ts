/**
 * The shape of a catalog entry, and of the description of a call it gives (how a call is shown,
 * see describe.ts), apart from the catalog itself so that each tool's definition module can name
 * its type without importing the catalog (which imports every definition).
 */
import type { CallEffect, Tool, ToolContext, ToolParameter } from "./base.ts";

/** What a call does, in the words of the Agent Client Protocol's tool kinds. */
export type CallKind = "edit" | "read" | "execute" | "search" | "think" | "fetch" | "other";

/** A file a call reads or changes: as the model named it (absolute, or relative to the workspace). */
export interface CallLocation {
  readonly path: string;
  /** The first line the call reads or changes, 1-based, when the call says. */
  readonly line?: number;
}

/**
 * The change a call asks for, readable without the file (a report of a finished run): a new
 * file's text, a fragment of the file and what replaces it, or lines inserted after a line.
 */
export type AskedChange =
  | { readonly kind: "create"; readonly text: string }
  | { readonly kind: "replace"; readonly old: string; readonly new: string }
  | { readonly kind: "insert"; readonly afterLine: number; readonly text: string };

/**
 * The file a call changes, and where its diff comes from. Its text before is the file on disk
 * (or in an editor's buffer), read by whoever shows the diff, pinned inside the workspace;
 * `after` computes the text after the call from it, and `change` is the change as asked.
 */
export interface CallDiff {
  /** The file as the model named it: absolute, or relative to the workspace. */
  readonly path: string;
  /** The change as the call asks for it, when the tool can say it without the file. */
  readonly change?: AskedChange;
  /**
   * The file's whole text after the call, given its text before (null: no such file);
   * undefined when the call would not apply to that text. Absent: no preview can be made.
   */
  readonly after?: (before: string | null) => string | undefined;
}

/**
 * How a call is shown, for every place that shows one (the approval preview, the consoles, ACP,
 * the report): built by the tool's catalog entry from the call's arguments, so that those places
 * read no argument names. Its own text is bounded: a title and a subject are one line of at most
 * 200 characters, secrets masked before the cut; `command` and a diff's `change` are the call's
 * own text, whole and unmasked (whoever shows them masks them).
 */
export interface CallDescription {
  /** One line that stands alone, as a client lists the call: `$ make test`, `create /w/a.py`. */
  readonly title: string;
  /** One line to show beside the tool's name: the call's main arguments (`make test`). */
  readonly subject: string;
  readonly kind: CallKind;
  /** The files the call reads or changes. */
  readonly locations: readonly CallLocation[];
  /** The command line a call runs, whole. */
  readonly command?: string;
  /** The file a call changes: the console shows its diff. */
  readonly diff?: CallDiff;
  /** A step of reasoning: its text (one line, bounded) and whether more steps follow. */
  readonly thought?: { readonly text: string; readonly more: boolean };
  /** The subject shows every argument of the call, whole: no need to show them again. */
  readonly saysAll?: boolean;
}

/** A tool's name, description and parameters: what the model reads, without the implementation. */
export interface ToolDefinitionSource {
  readonly name: string;
  readonly description: string;
  readonly parameters: readonly ToolParameter[];
}

/**
 * Where a tool's calls run.
 * - `in-process`: in Deft's own process. Only for tools which touch no file and start no process
 *   (the pure ones, and `web_fetch`, whose network goes through Deft's proxy and its list).
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
   * How a call with these arguments is shown (describe.ts): its title, kind, the files it
   * touches, its command line or its diff. The approval preview, the consoles, ACP and the
   * report read this, never the arguments themselves. Total: any arguments, of any type or
   * size, give a description, whose text is bounded.
   */
  readonly describe: (args: Record<string, unknown>) => CallDescription;
  /**
   * The arguments of the call that takes back the latest edit of `path`, for a tool that keeps
   * an edit history (`/undo` uses it). Absent: the tool's edits cannot be undone.
   */
  readonly undo?: (path: string) => Record<string, unknown>;
  /**
   * The arguments of the one call that makes the file at `path` read `after`, given its text
   * `before` (null: no file there), for a tool with an `undo`: the `Task` tool's `apply` writes a
   * child's changes through it, so the gate, checkpoints and `/undo` see each file as an edit.
   */
  readonly rewrite?: (
    path: string,
    before: string | null,
    after: string,
  ) => Record<string, unknown>;
  /** A successful call ends the agent's run (the done signal). */
  readonly endsRun?: boolean;
  /**
   * The tool keeps a shell between calls, and whatever its commands started: closing the tool
   * ends them all, and its next call starts a fresh one. A cancelled turn, Ctrl-C or a client
   * that answered too late stops them (`ToolExecutor.stopShells`), without naming the tool.
   */
  readonly holdsShell?: boolean;
  /**
   * The arguments of a call that only reports what the tool holds (bash_output's list of the
   * session's background shells): Deft's own look for /status, which reads nothing of the
   * workspace and changes nothing, so it is made by the executor without the gate.
   */
  readonly statusCall?: Record<string, unknown>;
  /**
   * The arguments of the call that ends what the tool started after `since` (an ISO time), when
   * a rewind takes back the turns since then (kill_shell: the background shells those turns
   * started). Deft's own call, made by the executor without the gate; it answers what it ended,
   * one a line.
   */
  readonly takeBackCall?: (since: string) => Record<string, unknown>;
  /**
   * The tool works only inside an agent session, which puts its own runner in the stand-in's
   * place (Task: a child agent). A front end with no session (`deft serve`, `deft mcp`) does not
   * offer it: there its every call could only answer an error (`servedToolNames`).
   */
  readonly needsSession?: boolean;
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
