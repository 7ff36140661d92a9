/**
 * The shape every Deft tool shares: a name, a description and parameters that the model reads, and
 * an `execute` that does the work. The base class renders the model-facing JSON schema per
 * provider (see `schema.ts`) and caches it for the life of the instance.
 */
import type { ShellEnvironmentPolicy } from "../policy/shell_env.ts";
import {
  type Provider,
  renderDefinition,
  type ToolDefinition,
  type ToolParameter,
} from "./schema.ts";

// The parameter types are declared with the schema they render to; tools import them from here.
export type { ParamSchema, ParamType, Provider, ToolParameter } from "./schema.ts";

/** What a tool returns. `error_code` 0 means success; anything else is a failure. */
export interface ToolExecResult {
  output: string | null;
  error: string | null;
  error_code: number;
  /** Kept in the trajectory beside the result, never sent to the model. */
  record?: ResultRecord;
}

/** What the trajectory keeps of a call besides its text (the `Task` tool's). */
export interface ResultRecord {
  /** The child agent the call ran: its session, its trajectory file and its patch's file. */
  subagent?: { session_id: string; trajectory: string; patch_file?: string };
  /**
   * The calls this call made through another tool, in order (the `Task` tool's `apply`: one
   * editor call per file), so `/undo` takes their edits back as the model's own.
   */
  edits?: { name: string; arguments: Record<string, unknown>; success: boolean }[];
  /** The network destinations decided while the call ran, where a front end tracks them. */
  network?: { host: string; port: number; allowed: boolean; reason: string }[];
}

/** Settings that tune tools; every field has a default so an empty object is valid. */
export interface ToolSettings {
  /** Default bash timeout in seconds. */
  bashTimeoutSeconds?: number;
  /** Characters of stdout/stderr shown to the model before head/tail clipping. */
  outputLimit?: number;
  /** `workspace-write` runs bash inside bubblewrap; `read-only` also makes the workspace read-only. */
  sandbox?: import("../policy/sandbox.ts").SandboxMode;
  /** Let sandboxed commands use the network. */
  allowNetwork?: boolean;
  /** The hosts sandboxed commands may reach through Deft's proxy (`network:`; config/network.ts). */
  network?: import("../policy/network/rules.ts").NetworkList;
  /** The running proxy's Unix socket (set by Deft when it starts the proxy). */
  networkProxy?: string;
  /**
   * A forwarder to that proxy already listens in the shell's own network namespace (a container
   * Deft started under the list): the shell gets the proxy variables without a sandbox of its own.
   */
  networkForwarded?: boolean;
  /** The bubblewrap executable for `workspace-write` (default: `bwrap` on PATH). */
  bwrapPath?: string;
  /**
   * util-linux `unshare`, which holds the shell in a PID namespace when bwrap cannot (default:
   * `unshare` on PATH); a path that is not there turns that fallback off.
   */
  unsharePath?: string;
  /** Largest file the editor views or edits whole, in bytes. */
  maxFileBytes?: number;
  /** Where the code knowledge graph keeps its databases. */
  ckgDir?: string;
  /** The session's private temp folder (set by the tool host). */
  tempDir?: string;
  /** Which variables the shell inherits (default: all but secret-looking ones). */
  shellEnvironment?: ShellEnvironmentPolicy;
  /** Seconds a hosted tool call may run, per tool name (key `default`: the rest). */
  deadlines?: Readonly<Record<string, number>>;
  /**
   * The tools answer one call and close (`deft tool`): nothing is started for later calls, such
   * as the code graph's background index, which such a process would not live to use.
   */
  singleCall?: boolean;
}

/** Everything a tool is built with. */
export interface ToolContext {
  /** The provider whose schema rules the definitions follow. */
  provider: Provider;
  /** Absolute, symlink-free path of the workspace root. */
  workspace: string;
  settings: ToolSettings;
}

/**
 * What one call of a tool does, as far as the user is concerned; the tool's catalog entry says it
 * (`effects`), so nothing else reads argument names to find out.
 * - `read`: changes nothing (a view, a search, a thought, the done signal).
 * - `edit`: changes one file (see `EditEffect`).
 * - `command`: runs a command line, which can do anything the sandbox allows.
 * - `other`: changes only the tool's own state (bash's `restart`), nothing in the workspace.
 */
export type CallEffect =
  | { readonly kind: "read" }
  | EditEffect
  | CommandEffect
  | FetchEffect
  | { readonly kind: "other" };

/**
 * A call that fetches from the network (web_fetch): `host` as the URL names it, lower case ("" when
 * the URL cannot be read). Asked about in `commands` mode unless a `fetch HOST` rule allows it.
 */
export interface FetchEffect {
  readonly kind: "fetch";
  readonly host: string;
}

/** A call that runs a command line. */
export interface CommandEffect {
  readonly kind: "command";
  readonly command: string;
  /**
   * The tool honours `CallPlan.unasked`: told so, it runs the command where it cannot act (bash:
   * a fresh read-only sandbox). Only then may the approval gate let a read-only command through
   * without asking; a tool that would run it as usual is asked about every command.
   */
  readonly confinesUnasked?: boolean;
}

/** A call that changes one file. */
export interface EditEffect {
  readonly kind: "edit";
  /** The file as the model named it: absolute, or relative to the workspace. */
  readonly path: string;
  /** The change as the model asked for it, in a few lines: shown when no preview can be made. */
  readonly summary: string;
  /**
   * The file's text after the call, given its text before (null: the file does not exist);
   * undefined when the edit would not apply as given. Absent when no preview can be computed.
   */
  readonly after?: (before: string | null) => string | undefined;
  /** The call takes back the latest edit of `path` (the editor's `undo_edit`). */
  readonly reverts?: boolean;
}

/**
 * How the executor runs a call its gate let through: data passed beside the model's arguments,
 * never inside them, so no argument the model writes can stand for a verdict.
 */
export interface CallPlan {
  /**
   * The gate let the call through without asking the user: the tool must run it where it cannot
   * act. The bash tool runs such a command in a fresh read-only sandbox (policy/process.ts
   * `unaskedPolicy`) instead of the session's shell.
   */
  readonly unasked?: boolean;
  /** With tracing on, the call's span as a W3C `traceparent`, for the commands it runs. */
  readonly traceparent?: string;
}

/** A successful result carrying `output`. */
export function ok(output: string): ToolExecResult {
  return { output, error: null, error_code: 0 };
}

/** A failed result carrying `error`; `code` defaults to -1 as in Trae Agent. */
export function fail(error: string, code = -1, output: string | null = null): ToolExecResult {
  return { output, error, error_code: code };
}

/** The failed result of a tool that threw instead of answering. */
export function thrownResult(toolName: string, error: unknown): ToolExecResult {
  const message = error instanceof Error ? error.message : String(error);
  return fail(`Error executing tool '${toolName}': ${message}`);
}

/** Lower-cases and drops underscores, so `STR_REPLACE_BASED_EDIT_TOOL` finds the editor. */
export function normalizeToolName(name: string): string {
  return name.toLowerCase().replaceAll("_", "");
}

/**
 * Base class of every tool. Subclasses declare `name`, `description`, `parameters` and implement
 * `execute`; arguments reach `execute` already validated against `parameters` (see the executor).
 */
export abstract class Tool {
  abstract readonly name: string;
  abstract readonly description: string;
  abstract readonly parameters: readonly ToolParameter[];
  readonly #definitions = new Map<Provider, ToolDefinition>();

  constructor(readonly context: ToolContext) {}

  /**
   * Does the work. May throw: the executor turns a throw into a failed result. `plan` is how the
   * approval gate let the call through (absent: as asked, or with no gate).
   */
  abstract execute(args: Record<string, unknown>, plan?: CallPlan): Promise<ToolExecResult>;

  /**
   * What a call with `args` does; undefined when the tool cannot say (a tool outside the catalog,
   * whose calls the approval gate then treats as able to do anything).
   */
  effects(_args: Record<string, unknown>): CallEffect | undefined {
    return undefined;
  }

  /** Releases processes, files or connections the tool holds. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /** The definition sent to `provider` (default: the one the tool was built for), computed once. */
  jsonDefinition(provider: Provider = this.context.provider): ToolDefinition {
    let definition = this.#definitions.get(provider);
    if (!definition) {
      definition = renderDefinition(this, provider);
      this.#definitions.set(provider, definition);
    }
    return definition;
  }
}
