/**
 * The `task` tool's runner: a child agent with its own context, run to completion inside a tool
 * call of its parent's (issue 54). The session puts it in the catalog stand-in's place
 * (`offerSubagents`), so it sits behind the parent's gate pipeline like any tool.
 *
 * - Where it works: mode `write`, its own git worktree of the workspace (./subagent_tree.ts),
 *   its tools' sandbox writing only that worktree (`workspace-write` at least, whatever the
 *   parent's); mode `read`, the parent's workspace in a `read-only` sandbox.
 * - What it shares: the parent's model client, and its gates — the same hooks and approval gate
 *   instances (the gate puts one question at a time, parent's and children's alike). Each of
 *   the child's calls passes them as the parent's do.
 * - Its bounds: a hard deadline (config `subagents.deadline_seconds`, default 600) after which
 *   its model call is aborted and its tools are closed (a hung command with them), a step limit,
 *   a limit on children at once (`subagents.parallel`, default 2) and on nesting
 *   (`subagents.depth`, default 1: a child gets no `task` tool). A child draws from the
 *   parent's budget: its loop checks the same caps before each request and charges them.
 * - Hooks: SubagentStart (its context goes with the child's task) and SubagentStop (a block
 *   keeps the child going, at most `MAX_KEPT_GOING` times), in Claude Code's shape.
 * - What it leaves: its own trajectory file (named in the result), its patch saved beside it
 *   and returned whole or clipped in the result — the parent applies it with its own edit tools,
 *   so approvals, checkpoints and `/undo` see it. The worktree goes when the child ends and, for
 *   any child still running, when the session closes its tools.
 */
import type { AgentConsole } from "./console.ts";
import { runAgent } from "./agent.ts";
import { openChildTree } from "./subagent_tree.ts";
import { patchChanges, recordBaseline, type WorkspaceBaseline, workspacePatch } from "./patch.ts";
import { patchStats } from "./patch_stats.ts";
import { childText, SubagentRun } from "./subagent_result.ts";
import { applyPatch, type KeptPatch } from "./subagent_apply.ts";
import type { LLMClient, LLMMessage } from "../llm/types.ts";
import type { Budget } from "./budget.ts";
import type { RunConfig } from "../config/resolve.ts";
import { gatedExecutor, type GateParts } from "../gate/pipeline.ts";
import { gitSandbox, runGit } from "../policy/git.ts";
import { readOwnText } from "../policy/own_file.ts";
import { fail, ok, Tool, type ToolContext, type ToolExecResult } from "../tools/base.ts";
import { normalizeToolName, type ToolExecutor } from "../tools/executor.ts";
import { TASK } from "../tools/task_tool.ts";
import { checkSandbox, createHostedTools, hostDirs } from "../tools/host/mod.ts";
import { defaultTrajectoryPath, newSessionId, TrajectoryRecorder } from "../trajectory/recorder.ts";

/** Seconds a child may run unless the config says otherwise. */
export const DEFAULT_DEADLINE_SECONDS = 600;
/** Steps a child may take unless the config says otherwise (never more than the parent's). */
export const DEFAULT_CHILD_STEPS = 50;
/** Times SubagentStop hooks may keep one child going after it answered. */
const MAX_KEPT_GOING = 3;
/** Children running at once unless the config says otherwise. */
export const DEFAULT_PARALLEL = 2;
/** The largest saved patch `apply` reads back. */
const MAX_PATCH_BYTES = 64 * 1024 * 1024;

/** What a session lends its children. */
export interface SubagentHome {
  /** The parent's model client. */
  client: LLMClient;
  /** The parent's budget, which its children's requests are checked against and charge. */
  budget?: Budget;
  /** The parent's gates: the same hooks and approval gate instances. */
  gates: GateParts;
  config: RunConfig;
  /** The parent's workspace (a host folder). */
  workspace: string;
  console: AgentConsole;
  /** The project instructions for the child's system prompt. */
  instructions: string;
}

/** Counts children running at once; a child waits for a slot. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(count: number) {
    this.#free = count;
  }
  async take(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((go) => this.#waiting.push(go));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

/**
 * The caller's side of the link: the trajectory its children name as their parent's, and the
 * signal of the caller's running turn, whose abort stops them (the session sets both per turn).
 */
export interface ParentLink {
  parent?: { session_id: string | null; trajectory: string | null };
  signal?: AbortSignal;
}

/**
 * Puts the child runner in the place of the `task` stand-in, when the session's tools have it;
 * the executor keeps its gates (`replaceTool`). Returns the link the session keeps up to date
 * with the trajectory it records into (undefined: no `task` tool).
 */
export function offerSubagents(
  executor: ToolExecutor,
  home: SubagentHome,
): ParentLink | undefined {
  const standIn = executor.find(TASK.name);
  if (!standIn) return undefined;
  const settings = home.config.subagents ?? {};
  const link: ParentLink = {};
  const tool = new SubagentTool(standIn.context, home, {
    depth: 0,
    slots: new Slots(settings.parallel ?? DEFAULT_PARALLEL),
    toolNames: executor.tools.map((t) => t.name),
    executor,
    link,
  });
  executor.replaceTool(TASK.name, tool);
  return link;
}

interface Lineage {
  /** How deep this tool's caller is: 0, the session's own agent. */
  depth: number;
  slots: Slots;
  /** The caller's tools: a child gets these or fewer. */
  toolNames: readonly string[];
  /** The caller's executor: its editor and gates write an applied patch. */
  executor: ToolExecutor;
  /** The caller's trajectory, which its children record as their parent. */
  link: ParentLink;
}

/** `task`: runs a child agent and answers with what it did. */
export class SubagentTool extends Tool {
  readonly name = TASK.name;
  readonly description = TASK.description;
  readonly parameters = TASK.parameters;
  readonly #runs = new Set<SubagentRun>();
  /** The patches of this caller's children, by the child's session id, for `apply`. */
  readonly #patches = new Map<string, KeptPatch>();

  constructor(
    context: ToolContext,
    private readonly home: SubagentHome,
    private readonly lineage: Lineage,
  ) {
    super(context);
  }

  override effects() {
    return { kind: "other" as const };
  }

  /** The tools a child of this caller may have. */
  #childTools(): string[] {
    const depthLimit = this.home.config.subagents?.depth ?? 1;
    const nests = this.lineage.depth + 1 < depthLimit;
    return this.lineage.toolNames.filter((n) => nests || normalizeToolName(n) !== "task");
  }

  async execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    if (typeof args.apply === "string" && args.apply.trim() !== "") {
      return await this.#apply(args.apply, args.files);
    }
    const description = String(args.description ?? "").trim() || "task";
    const prompt = String(args.prompt ?? "");
    const mode = args.mode === "read" ? "read" : "write";
    if (prompt.trim() === "") {
      return fail(
        "task: the prompt is empty; say what the child is to do (or pass `apply` with a " +
          "finished child's patch id to apply its changes).",
      );
    }
    const allowed = this.#childTools();
    let names = allowed;
    if (Array.isArray(args.tools)) {
      const byKey = new Map(allowed.map((n) => [normalizeToolName(n), n]));
      const unknown = args.tools.filter((n) => !byKey.has(normalizeToolName(String(n))));
      if (unknown.length > 0) {
        return fail(
          `task: no tool named ${unknown.map((n) => `'${n}'`).join(", ")} for a child. ` +
            `Valid tool names: ${allowed.join(", ")}.`,
        );
      }
      names = [...new Set(args.tools.map((n) => byKey.get(normalizeToolName(String(n)))!))];
    }
    // The caller's turn was cancelled (Ctrl-C): no child starts, and a running one stops.
    const turn = this.lineage.link.signal;
    const cancelled = () => fail("task: not started: the turn was cancelled.");
    if (turn?.aborted) return cancelled();
    // Nested children run in their parent's slot: waiting for another could wait forever.
    const give = this.lineage.depth === 0 ? await this.lineage.slots.take() : () => {};
    if (turn?.aborted) {
      give();
      return cancelled();
    }
    const run = new SubagentRun(description, mode);
    const stop = () => void run.end("it was stopped: the turn was cancelled");
    turn?.addEventListener("abort", stop, { once: true });
    this.#runs.add(run);
    try {
      return await this.#run(run, prompt, names);
    } finally {
      turn?.removeEventListener("abort", stop);
      await run.end();
      this.#runs.delete(run);
      give();
    }
  }

  /** `apply`: a child's patch into the caller's tree, through its editor and gates. */
  async #apply(id: string, files: unknown): Promise<ToolExecResult> {
    const kept = await this.#kept(id.trim());
    if (!kept) {
      const known = [...this.#patches.keys()];
      return fail(
        `task: no patch '${id}' to apply: ` +
          (known.length > 0
            ? `the patches of this session's children are ${known.join(", ")}.`
            : "no child of this session has left one (a child's patch is named in its result)."),
      );
    }
    return await applyPatch(
      kept,
      Array.isArray(files) ? files.map(String) : undefined,
      {
        workspace: this.home.workspace,
        executor: this.lineage.executor,
        maxFileBytes: this.home.config.toolSettings.maxFileBytes,
      },
    );
  }

  /**
   * A child's patch by its id: one of this session's children's, else one saved by an earlier
   * run of the conversation (`--continue`), read from Deft's trajectories folder.
   */
  async #kept(id: string): Promise<KeptPatch | undefined> {
    const known = this.#patches.get(id);
    if (known || !/^[\w.-]+$/.test(id) || id.includes("..")) return known;
    const file = defaultTrajectoryPath(id).replace(/\.json$/, ".patch");
    const patch = await readOwnText(file, { limit: MAX_PATCH_BYTES, what: "a child's patch" })
      .catch(() => undefined);
    if (patch === undefined) return undefined;
    const top = await runGit(this.home.workspace, ["rev-parse", "--show-toplevel"])
      .catch(() => undefined);
    return top?.ok ? { id, patch, file, base: top.out.trim() } : undefined;
  }

  async #run(run: SubagentRun, prompt: string, names: string[]): Promise<ToolExecResult> {
    const { home } = this;
    const { config } = home;
    const sub = config.subagents ?? {};
    const parentSettings = config.toolSettings;
    let workspace = home.workspace;
    let carried: string | undefined;
    let top = home.workspace;
    if (run.mode === "write") {
      const tree = await openChildTree(
        home.workspace,
        gitSandbox(home.workspace, parentSettings),
      ).catch((e: Error) => e);
      if (tree instanceof Error) return fail(`task: ${tree.message}.`);
      run.onEnd(tree.remove);
      workspace = tree.workspace;
      carried = tree.carried;
      top = tree.top;
    }
    // The child's sandbox writes only its worktree; a reader writes nothing.
    const settings = {
      ...parentSettings,
      sandbox: run.mode === "read" ? "read-only" as const : "workspace-write" as const,
    };
    try {
      checkSandbox(settings, names, workspace);
    } catch (e) {
      return fail(`task: the child's sandbox cannot start: ${(e as Error).message}`);
    }
    const sandbox = gitSandbox(workspace, settings);
    let baseline: WorkspaceBaseline | undefined;
    if (run.mode === "write") {
      baseline = await recordBaseline(workspace, { sandbox }).catch(() => undefined);
      run.onEnd(() => baseline?.dispose());
    }
    const tools = await createHostedTools(
      { provider: this.context.provider, workspace, settings },
      names,
      hostDirs(settings),
    );
    const executor = gatedExecutor(tools, home.gates);
    run.onEnd(async () => void await executor.closeTools().catch(() => []));
    const sessionId = newSessionId();
    const trajectory = defaultTrajectoryPath(sessionId);
    if (executor.find(TASK.name)) {
      executor.replaceTool(
        TASK.name,
        new SubagentTool({ ...this.context, workspace, settings }, { ...home, workspace }, {
          depth: this.lineage.depth + 1,
          slots: this.lineage.slots,
          toolNames: names,
          executor,
          link: { parent: { session_id: sessionId, trajectory }, signal: run.signal },
        }),
      );
    }
    const recorder = new TrajectoryRecorder(trajectory, {
      session_id: sessionId,
      task: prompt,
      working_dir: workspace,
      provider: home.client.provider,
      model: home.client.model,
      max_steps: Math.min(sub.max_steps ?? DEFAULT_CHILD_STEPS, config.agent.max_steps),
      parent: this.lineage.link.parent ?? { session_id: null, trajectory: null },
    });
    const deadline = (sub.deadline_seconds ?? DEFAULT_DEADLINE_SECONDS) * 1000;
    home.console.note(`task '${run.description}' (${run.mode}) started: ${recorder.path}`);
    const hooks = home.gates.hooks;
    const context = await hooks?.subagentStart(sessionId, run.mode);
    const conversation: LLMMessage[] = [];
    const turn = (text: string, signal: AbortSignal) => {
      recorder.stepOffset = recorder.data.agent_steps.at(-1)?.step_number ?? 0;
      return runAgent(text, {
        client: home.client,
        executor,
        recorder,
        console: childConsole(home.console, run.description),
        workspace,
        maxSteps: recorder.data.max_steps,
        parallelToolCalls: config.model.settings.parallel_tool_calls,
        signal,
        conversation,
        textEndsTurn: true,
        instructions: home.instructions,
        budget: home.budget,
      });
    };
    const outcome = await run.within(deadline, async (signal) => {
      let result = await turn(context ? `${prompt}\n\n${context}` : prompt, signal);
      // SubagentStop hooks may keep a child that answered going, a few times at most.
      for (let kept = 0; hooks && result.success && !signal.aborted; kept++) {
        const said = await hooks.subagentStop(sessionId, run.mode, recorder.path, kept > 0);
        if (!said.block || kept === MAX_KEPT_GOING) break;
        result = await turn(said.block.reason, signal);
      }
      return result;
    }, () => executor.closeTools().then(() => {}));
    if (outcome.stopped) recorder.finalize(false, outcome.stopped);
    let patch = "";
    let patchError: string | undefined;
    if (run.mode === "write") {
      patch = await workspacePatch(workspace, { baseline, sandbox }).catch((e: Error) => {
        patchError = e.message;
        return "";
      });
    }
    const changes = patchChanges(patch) ? await patchStats(patch) : [];
    const patchFile = changes.length > 0
      ? recorder.path.replace(/\.json$/, "") + ".patch"
      : undefined;
    if (patchFile) {
      await Deno.writeTextFile(patchFile, patch, { mode: 0o600 });
      this.#patches.set(sessionId, { id: sessionId, patch, file: patchFile, base: top });
    }
    const text = childText({
      run,
      sessionId,
      trajectory: recorder.path,
      deadlineSeconds: deadline / 1000,
      outcome,
      carried,
      changes,
      patch,
      patchFile,
      patchError,
    });
    home.console.note(`task '${run.description}' ended: ${outcome.summary}`);
    const answer = outcome.success ? ok(text) : fail(text);
    const link = { session_id: sessionId, trajectory: recorder.path };
    return {
      ...answer,
      record: { subagent: patchFile ? { ...link, patch_file: patchFile } : link },
    };
  }

  /** Ends every child still running and removes its worktree (the session is closing). */
  override async close(): Promise<void> {
    await Promise.all([...this.#runs].map((r) => r.end()));
  }
}

/** The child's steps on the parent's console, one line each, named by the task. */
function childConsole(parent: AgentConsole, description: string): AgentConsole {
  const label = `  [task ${description}]`;
  return {
    step: (step, calls) =>
      parent.note(`${label} step ${step}: ${calls.map((c) => c.name).join(", ") || "answer"}`),
    note: (message) => parent.note(`${label} ${message}`),
    summary: () => {},
  };
}
