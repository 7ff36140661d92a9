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
 * Set by the executor on a call its gate let through without asking the user, never by the model
 * (an argument no tool declares fails validation first): the tool must run the call where it
 * cannot act. The bash tool runs such a command in a fresh read-only sandbox
 * (policy/process.ts `unaskedPolicy`) instead of the session's shell.
 */
export const UNASKED = "__deft_unasked";

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

  /** Does the work. May throw: the executor turns a throw into a failed result. */
  abstract execute(args: Record<string, unknown>): Promise<ToolExecResult>;

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
