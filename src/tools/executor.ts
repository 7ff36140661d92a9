/**
 * Turns the model's tool calls into results. The executor never throws at its caller: an unknown
 * tool, invalid arguments or a tool that throws all come back as failed results the model can read.
 *
 * This is the one place a call's arguments are checked (nesting depth, then the tool's declared
 * parameters), in the main process before the call goes anywhere: the check must come before the
 * arguments are copied to a tool host (a value nested too deep would overflow structured
 * cloning), the approval gate and the host's deadline read the cleaned arguments, and MCP tools
 * get the same check. A tool host runs only calls this executor has let through.
 */
import {
  type CallPlan,
  fail,
  normalizeToolName,
  type ResultRecord,
  thrownResult,
  type Tool,
  type ToolExecResult,
} from "./base.ts";
import type { ApprovalDecision } from "./approval_decision.ts";
import { catalogEntry } from "./catalog.ts";
import { validateArguments } from "./validate.ts";
import { nestingProblem } from "./nesting.ts";
import { traceToolCall } from "../telemetry/tool.ts";
import { traceparentEnv, tracingEnabled } from "../telemetry/tracing.ts";

// Name matching lives with the tools; callers that match names as the executor does import it here.
export { normalizeToolName } from "./base.ts";

/** One call as the model made it. `arguments` is whatever the model sent. */
export interface ToolCall {
  name: string;
  call_id: string;
  arguments: unknown;
  id?: string;
  /**
   * Who made the call: absent for the model; `user` for one the user typed at the prompt (`!cmd`,
   * `/undo`). The gate takes the typing as the user's yes to the approval mode's question; hooks
   * and deny rules still apply (src/gate/pipeline.ts).
   */
  by?: "user";
}

/** The result of one call, echoing its name and ids. */
export interface ToolCallResult {
  name: string;
  call_id: string;
  id?: string;
  success: boolean;
  output: string | null;
  error: string | null;
  error_code: number;
  /** The gate's decision on the call and who made it; absent when no gate decided. */
  approval?: ApprovalDecision;
  /** What the tool gave the trajectory besides its text (`ToolExecResult.record`). */
  record?: ResultRecord;
}

/**
 * A gate's answer: null lets the call through as it is, a text refuses it (the model reads it),
 * `RUN_UNASKED` lets it through unasked, to run where it cannot act (the executor hands the tool
 * a `CallPlan` saying so, beside the arguments).
 */
export type GateVerdict = string | null | typeof RUN_UNASKED;

/** The verdict for a call let through without asking the user. */
export const RUN_UNASKED: unique symbol = Symbol("run unasked");

/** A gate's verdict with the record of who decided it. */
export interface GateDecision {
  verdict: GateVerdict;
  decision: ApprovalDecision;
  /** Arguments to run instead of the model's (a PreToolUse hook's rewrite, already validated). */
  args?: Record<string, unknown>;
  /** How the tool is to run the call (absent: `{unasked: true}` for `RUN_UNASKED`, else as asked). */
  plan?: CallPlan;
}

/**
 * Decides whether a validated call may run. The gate pipeline (src/gate/pipeline.ts) has this
 * shape, and so do its parts.
 */
export interface CallGate {
  check(tool: Tool, args: Record<string, unknown>): Promise<GateVerdict>;
  /** As `check`, with the decision's record; the executor prefers it when a gate has it. */
  decide?(tool: Tool, args: Record<string, unknown>, call: ToolCall): Promise<GateDecision>;
  /** Sees each result of a call the gate let through (PostToolUse hooks) and may amend it. */
  after?(
    tool: Tool,
    args: Record<string, unknown>,
    result: ToolCallResult,
  ): Promise<ToolCallResult>;
}

/**
 * Runs calls against a set of tools, each call past `gate` first when there is one. The gate is
 * fixed at construction: nothing can take it away or put another in front of the tools later. A
 * front end may swap one tool's implementation for another of the same name (`replaceTool`: an
 * editor over a client's buffers) or add tools (`addTools`: a client's MCP servers); their calls
 * pass the same gate.
 */
/** What a shell watcher hears: the background shells may have changed, or the tools closed. */
export type ShellsEvent = "changed" | "closed";

export class ToolExecutor {
  readonly #tools: Tool[];
  readonly #byName: Map<string, Tool>;
  readonly #gate?: CallGate;
  readonly #shellWatchers: ((event: ShellsEvent) => void | Promise<void>)[] = [];
  /** The tools are closing: Deft's own looks (`status`) must not start a host again. */
  #closing = false;

  constructor(tools: readonly Tool[], gate?: CallGate) {
    this.#tools = [...tools];
    this.#gate = gate;
    this.#byName = new Map(tools.map((t) => [normalizeToolName(t.name), t]));
  }

  /** The tools this executor runs, in registration order. */
  get tools(): readonly Tool[] {
    return [...this.#tools];
  }

  /**
   * Puts `tool` in the place of the tool of the same name (ignoring case and underscores), behind
   * the same gate. Throws when there is no such tool, or when `tool` has another name.
   */
  replaceTool(name: string, tool: Tool): void {
    const key = normalizeToolName(name);
    const old = this.#byName.get(key);
    if (!old) throw new Error(`no tool '${name}' to replace`);
    if (normalizeToolName(tool.name) !== key) {
      throw new Error(`tool '${tool.name}' cannot stand in for '${name}': the names differ`);
    }
    this.#tools[this.#tools.indexOf(old)] = tool;
    this.#byName.set(key, tool);
  }

  /** Adds tools behind the same gate. Throws when one's name is taken, adding none. */
  addTools(tools: readonly Tool[]): void {
    const keys = tools.map((t) => normalizeToolName(t.name));
    const taken = tools.find((_t, i) => this.#byName.has(keys[i]) || keys.indexOf(keys[i]) !== i);
    if (taken) throw new Error(`a tool named '${taken.name}' is there already`);
    tools.forEach((t, i) => {
      this.#tools.push(t);
      this.#byName.set(keys[i], t);
    });
  }

  /** Finds a tool by name, ignoring case and underscores. */
  find(name: string): Tool | undefined {
    return typeof name === "string" ? this.#byName.get(normalizeToolName(name)) : undefined;
  }

  /** Runs one call. Always resolves. */
  async executeToolCall(call: ToolCall): Promise<ToolCallResult> {
    const tool = this.find(call.name);
    const result = await traceToolCall(
      tool?.name ?? call.name,
      call.call_id,
      tracingEnabled() ? effectKind(tool, call.arguments) : undefined,
      () => this.#execute(call, tool),
    );
    if (tool && touchesShells(tool.name)) this.#tellShells("changed");
    return result;
  }

  /**
   * Calls `listener` when the background shells the tools hold may have changed (`changed`):
   * after a call of a tool whose catalog entry holds, lists or takes back shells, after
   * `stopShells` and `takeBack`; and once with `closed` when the tools close, which waits for it.
   * The session publishes its shells for `deft sessions` this way (src/agent/shell_board.ts).
   */
  watchShells(listener: (event: ShellsEvent) => void | Promise<void>): void {
    this.#shellWatchers.push(listener);
  }

  #tellShells(event: ShellsEvent): Promise<unknown> {
    return Promise.allSettled(
      this.#shellWatchers.map(async (listener) => await listener(event)),
    );
  }

  async #execute(call: ToolCall, tool: Tool | undefined): Promise<ToolCallResult> {
    if (!tool) {
      const names = this.#tools.map((t) => t.name).join(", ");
      return wrap(call, call.name, {
        output: null,
        error: `Tool '${call.name}' not found. Available tools: [${names}]`,
        error_code: -1,
      });
    }
    const tooDeep = nestingProblem(call.arguments);
    if (tooDeep) return wrap(call, tool.name, { output: null, error: tooDeep, error_code: -1 });
    const validation = validateArguments(tool.name, tool.parameters, call.arguments);
    if (!validation.ok) {
      return wrap(call, tool.name, { output: null, error: validation.error, error_code: -1 });
    }
    const gate = this.#gate;
    const decided: Partial<GateDecision> & { verdict: GateVerdict } =
      await gate?.decide?.(tool, validation.args, call) ??
        { verdict: await gate?.check(tool, validation.args) ?? null };
    const { verdict, decision, args = validation.args } = decided;
    if (typeof verdict === "string") {
      return wrap(call, tool.name, { output: null, error: verdict, error_code: -1 }, decision);
    }
    // The verdict travels beside the model's arguments, never inside them.
    let plan: CallPlan | undefined = decided.plan ??
      (verdict === RUN_UNASKED ? { unasked: true } : undefined);
    const { TRACEPARENT: traceparent } = traceparentEnv();
    if (traceparent) plan = { ...plan, traceparent };
    let result: ToolCallResult;
    try {
      result = wrap(call, tool.name, await tool.execute(args, plan), decision);
    } catch (e) {
      result = wrap(call, tool.name, thrownResult(tool.name, e), decision);
    }
    return gate?.after ? await gate.after(tool, args, result) : result;
  }

  /** Runs all calls at once; results come back in call order. */
  parallelToolCall(calls: readonly ToolCall[]): Promise<ToolCallResult[]> {
    return Promise.all(calls.map((c) => this.executeToolCall(c)));
  }

  /** Runs calls one after another, in order. */
  async sequentialToolCall(calls: readonly ToolCall[]): Promise<ToolCallResult[]> {
    const results: ToolCallResult[] = [];
    for (const call of calls) results.push(await this.executeToolCall(call));
    return results;
  }

  /**
   * Ends the shells the tools keep between calls, and everything their commands started, as a
   * cancel does: closes each tool whose catalog entry says it holds a shell (bash); its next
   * call gets a fresh one. The other tools (the editors, a client's MCP servers) are left as
   * they are. Resolves when they are closed; a close that fails is ignored (the next call
   * starts anew all the same).
   */
  async stopShells(): Promise<void> {
    const shells = this.#tools.filter((t) => catalogEntry(t.name)?.holdsShell === true);
    await Promise.allSettled(shells.map((t) => t.close()));
    this.#tellShells("changed");
  }

  /**
   * What the tools that can say so hold now (their catalog entry's `statusCall`), for /status:
   * each such tool's answer, by tool name. Not a call of the model's: no gate, no record. None
   * once the tools are closing.
   */
  async status(): Promise<{ tool: string; result: ToolExecResult }[]> {
    // A look after the tools began to close would start their host again, for nothing.
    if (this.#closing) return [];
    const reporting = this.#tools.flatMap((t) => {
      const call = catalogEntry(t.name)?.statusCall;
      return call ? [{ tool: t, call }] : [];
    });
    return await Promise.all(reporting.map(async ({ tool, call }) => ({
      tool: tool.name,
      result: await tool.execute({ ...call }).catch((e) => fail((e as Error).message)),
    })));
  }

  /**
   * Ends what the tools started after `since` (an ISO time), for a rewind that takes back the
   * turns since then: each tool whose catalog entry has a `takeBackCall` (the background shells
   * those turns started). Not a call of the model's: no gate, no record. Returns the lines the
   * tools answered (what they ended) and, for a tool that failed, why.
   */
  async takeBack(since: string): Promise<string[]> {
    const taking = this.#tools.flatMap((t) => {
      const call = catalogEntry(t.name)?.takeBackCall?.(since);
      return call ? [{ tool: t, call }] : [];
    });
    const answers = await Promise.all(taking.map(async ({ tool, call }) => {
      const result = await tool.execute(call).catch((e) => fail((e as Error).message));
      const text = (result.output ?? result.error ?? "").trim();
      if (result.error_code !== 0) return [`${tool.name} failed: ${text}`];
      return text ? text.split("\n") : [];
    }));
    if (taking.length > 0) this.#tellShells("changed");
    return answers.flat();
  }

  /** Closes every tool, even when some fail to close; returns the close errors it met. */
  async closeTools(): Promise<Error[]> {
    this.#closing = true;
    const outcomes = await Promise.allSettled(this.#tools.map((t) => t.close()));
    await this.#tellShells("closed");
    return outcomes.flatMap((o, i) =>
      o.status === "rejected"
        ? [new Error(`closing tool '${this.#tools[i].name}' failed: ${String(o.reason)}`)]
        : []
    );
  }
}

function wrap(
  call: ToolCall,
  name: string,
  result: ToolExecResult,
  approval?: ApprovalDecision,
): ToolCallResult {
  const wrapped: ToolCallResult = {
    name,
    call_id: call.call_id,
    success: result.error_code === 0,
    output: result.output,
    error: result.error,
    error_code: result.error_code,
  };
  if (call.id !== undefined) wrapped.id = call.id;
  if (approval) wrapped.approval = approval;
  if (result.record) wrapped.record = result.record;
  return wrapped;
}

/** Whether calls of the tool `name` may start, end or read background shells. */
function touchesShells(name: string): boolean {
  const entry = catalogEntry(name);
  return entry !== undefined &&
    (entry.holdsShell === true || entry.statusCall !== undefined ||
      entry.takeBackCall !== undefined);
}

/** The kind of effect the catalog gives a call, for its trace span; undefined when unknown. */
function effectKind(tool: Tool | undefined, args: unknown): string | undefined {
  try {
    return args && typeof args === "object"
      ? tool?.effects(args as Record<string, unknown>)?.kind
      : undefined;
  } catch {
    return undefined;
  }
}
