/**
 * Session assembly, shared by `deft run` and `deft interactive`: loading the configuration,
 * building the model client and the tools once, and running one task with its own conversation
 * and trajectory. The command hands in what belongs to the user's side (the workspace it
 * resolved, the console, how to ask and where diagnostics go), so nothing here reads flags or
 * writes to a terminal.
 */
import { resolve } from "node:path";
import { type AgentResult, runAgent } from "./agent.ts";
import type { AgentConsole } from "./console.ts";
import { watchNetwork } from "./network_watch.ts";
import { ContextManager } from "./context.ts";
import { Lakeview } from "./lakeview.ts";
import { hostDirs } from "../tools/host/mod.ts";
import { ApprovalGate } from "../gate/approval.ts";
import { isApprovalMode } from "../gate/modes.ts";
import { ReplayGate } from "../gate/replay.ts";
import { ConfigError, loadConfig } from "../config/load.ts";
import { askToTrust } from "../config/trust.ts";
import { openApprovalRules } from "./approval_rules.ts";
import { type ConfigOverrides, resolveRunConfig, type RunConfig } from "../config/resolve.ts";
import { createClient } from "../llm/client.ts";
import { ReplayClient } from "../llm/replay.ts";
import type { LLMClient, LLMImage, LLMMessage, LLMUsage } from "../llm/types.ts";
import { gitSandbox } from "../policy/git.ts";
import { SandboxUnavailableError } from "../policy/sandbox.ts";
import type { WorkspaceBaseline } from "./patch.ts";
import { lastTurn, takeCheckpoint } from "./checkpoints.ts";
import { openWorkplace, type Workplace } from "./workplace.ts";
import { StartWork } from "./session_start.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { homeWorkspaceNote } from "../policy/home_places.ts";
import { gatedExecutor } from "../gate/pipeline.ts";
import { promptWithHooks, runWithStopHooks, sessionHooks, stoppedBy } from "./hook_gate.ts";
import { hooksSource } from "../hooks/source.ts";
import type { Tool } from "../tools/base.ts";
import { UnknownToolError } from "../tools/catalog.ts";
import { createHostedTools } from "../tools/host/mod.ts";
import {
  defaultTrajectoryPath,
  newSessionId,
  stateDir,
  type Trajectory,
  TrajectoryRecorder,
} from "../trajectory/recorder.ts";
import { readEnv } from "../env.ts";
import type { Session, SessionIO, SessionOptions, TurnRecord } from "./session_types.ts";
import { offerSubagents } from "./subagent.ts";
import { UsageError } from "../errors.ts";
import { openBudget } from "./budget.ts";
import { ShellBoard } from "./shell_board.ts";

// What a session is, and where it works, live beside this file; commands import them from here.
export type { Asking, Session, SessionIO, SessionOptions, TurnRecord } from "./session_types.ts";
export type { Workplace, WorkplaceOptions } from "./workplace.ts";

/**
 * Loads the configuration and builds the client and tools; replays `recording` when given.
 * `given`: the configuration the front end already loaded (and asked trust for), used as is.
 */
export async function openSession(
  opts: SessionOptions,
  io: SessionIO,
  recording?: Trajectory,
  given?: Awaited<ReturnType<typeof loadConfig>>,
): Promise<Session> {
  const { console } = io;
  const loaded = given ?? await loadConfig(opts.configFile, {
    folder: opts.configFolder,
    // A repository's deft.yaml that sets what only a trusted folder may: asked once on a
    // terminal, one line without one.
    onUntrusted: askToTrust({
      terminal: io.asking.terminal,
      ask: io.asking.ask,
      write: io.write,
      declinedFile: `${stateDir()}/declined_trust`,
    }),
  });
  // Warnings of a configuration the front end loaded were told by it.
  const warnings = given ? [] : loaded.warnings;
  for (const warning of warnings) io.write(`warning: ${terminalText(warning)}`);
  const workplace = await openWorkplace(opts, loaded.config, console, io.workspace);
  try {
    await io.opened?.(workplace);
    return await assemble(opts, io, loaded, workplace, recording);
  } catch (e) {
    await workplace.close().catch(() => {});
    throw e;
  }
}

async function assemble(
  opts: SessionOptions,
  io: SessionIO,
  loaded: Awaited<ReturnType<typeof loadConfig>>,
  workplace: Workplace,
  recording: Trajectory | undefined,
): Promise<Session> {
  const { console, asking } = io;
  const { workspace } = workplace;
  const approvalMode = opts.approval ?? loaded.config.approval ?? asking.defaultMode;
  if (!isApprovalMode(approvalMode)) {
    throw new UsageError(`--approval must be never, commands or all, not '${approvalMode}'.`);
  }
  if (approvalMode !== "never" && !recording && !asking.terminal) {
    throw new UsageError(
      `approval mode '${approvalMode}' asks before tool calls, but standard input is not a ` +
        `terminal, so nobody could answer. Run with --approval never (or set approval: never) ` +
        `for unattended use, or start Deft from a terminal.`,
    );
  }
  const instructions = opts.projectInstructions === false
    ? { files: [], prompt: "" }
    : await workplace.instructions();
  const overrides: ConfigOverrides = { ...opts };
  if (recording) {
    overrides.provider ??= recording.provider;
    overrides.model ??= recording.model;
  }
  const config = resolveRunConfig(loaded, overrides, undefined, !recording);
  // A replay repeats a recording: it spends nothing, so no cap applies.
  const budget = recording ? undefined : await openBudget({ flags: opts, config, by: workspace });
  const client: LLMClient = recording ? new ReplayClient(recording, workspace) : createClient(
    config.model,
    ({ attempt, delayMs, reason }) =>
      console.note(
        `model call failed (${reason}); retry ${attempt} in ${(delayMs / 1000).toFixed(1)} s`,
      ),
    Number(readEnv("DEFT_RETRY_BASE_MS") ?? 1000),
  );
  // Step summaries use their own model and back off briefly: they must not hold up the run.
  // Their requests count against the budget's caps like the loop's.
  const summarizer = config.lakeview && !recording
    ? createClient(config.lakeview, undefined, 500)
    : undefined;
  const lakeviewClient = summarizer && budget ? budget.meter(summarizer) : summarizer;
  config.toolSettings = workplace.settle(config.toolSettings, config.agent.tools);
  // The first checkpoint's store and its sandboxed git start now, beside the rest of the start.
  const early = recording || config.checkpoints === false || io.namesSessions
    ? undefined
    : workplace.startCheckpoints?.();
  const homeNote = workplace.onHost &&
    homeWorkspaceNote(workspace, config.toolSettings.sandbox ?? "none");
  if (homeNote) console.note(homeNote);
  // Interactive leaves the baseline for after its prompt is drawn: `session.start`, which every
  // tool call and turn waits for (./session_start.ts).
  let start: StartWork | undefined;
  const baseline = io.startLater
    ? undefined
    : await recordStart(workplace, (text) => console.note(text));
  let tools: Tool[];
  try {
    // A trusted repository's own config file starts its MCP servers, but their word on their
    // tools (`readOnlyHint`) counts only when the servers are the user's.
    const annotationsTrusted = loaded.fromRepository !== true;
    tools = await sessionTools(config, workplace, console, annotationsTrusted);
  } catch (e) {
    baseline?.dispose();
    early?.release();
    throw e;
  }
  const canSwitch = asking.switchable && asking.terminal;
  const nobodyToAsk = opts.approveAsks ? undefined : asking.unattended;
  const rules = recording ? undefined : await openApprovalRules(loaded, io.workspace, {
    rulesFile: opts.approvalRules,
    configFile: opts.configFile,
    warn: (text) => io.write(`warning: ${terminalText(text)}`),
  });
  const gate = (approvalMode === "never" && !canSwitch) || recording ? undefined : new ApprovalGate(
    approvalMode,
    asking.ask,
    io.write,
    workspace,
    !workplace.onHost,
    rules,
    nobodyToAsk,
  );
  // Hooks run in front of the approval gate; a replay runs none (it repeats the recording).
  // They run on the host, inside the session's sandbox unless a hook says `sandbox: none`, where
  // the workplace says (./workplace.ts).
  const hookPlace = workplace.hookPlace();
  const hooks = recording ? undefined : await sessionHooks(
    loaded.config.hooks,
    hooksSource(loaded),
    hookPlace.folder,
    (t) => console.note(`warning: ${t}`),
    hookPlace.told,
    (t) => console.note(t),
    config.toolSettings,
  );
  const baseGate = gate ??
    (recording ? new ReplayGate(recording) : new ApprovalGate(
      "never",
      asking.ask,
      io.write,
      workspace,
      !workplace.onHost,
      rules,
      nobodyToAsk,
    ));
  const parts = { hooks, approval: baseGate };
  if (io.startLater) {
    const { tell } = io.startLater;
    start = new StartWork(async () => {
      session.baseline = await recordStart(workplace, tell);
    });
  }
  // Every call passes the gate pipeline (src/gate/pipeline.ts): the hooks, the rules, the
  // mode. Without a gate to switch, a gate in `never` still records each call's decision; a
  // replay repeats the recording's. A start left for later (interactive) is waited for there.
  const executor = gatedExecutor(tools, start ? { ...parts, start } : parts);
  // The `Task` tool's children (on the host only) share the client and these very gates
  // (./subagent.ts).
  const subagents = !recording && workplace.onHost
    ? offerSubagents(executor, {
      client,
      budget,
      gates: parts,
      config,
      workspace,
      console,
      instructions: instructions.prompt,
    })
    : undefined;
  if (instructions.files.length > 0) {
    console.note(`project instructions: ${instructions.files.map((f) => f.path).join(", ")}`);
  }
  const session: Session = {
    config,
    workspace,
    client,
    lakeviewClient,
    executor,
    hooks,
    console,
    recording,
    approval: gate,
    approvalRules: rules,
    instructions,
    baseline,
    start,
    workplace,
    budget,
    subagents,
    shells: new ShellBoard(executor),
    early,
  };
  return session;
}

/** Records the workspace's state before any tool runs; a failure is a warning (patch vs HEAD). */
async function recordStart(
  workplace: Workplace,
  note: (text: string) => void,
): Promise<WorkspaceBaseline | undefined> {
  try {
    return await workplace.recordBaseline();
  } catch (e) {
    if (e instanceof SandboxUnavailableError) throw e;
    note(
      `warning: could not record the state of ${workplace.description} ` +
        `(${(e as Error).message}); the patch and files changed will be measured against HEAD`,
    );
    return undefined;
  }
}

/**
 * The session's patch: what changed in its workspace since the session opened (in the container
 * when it has one), "" outside a git repository.
 */
export async function sessionPatch(session: Session): Promise<string> {
  await session.start?.run();
  return await session.workplace.patch(session.baseline);
}

// The configured tools, hosted the way `deft tool` hosts them, then the allowed MCP servers' tools.
async function sessionTools(
  config: RunConfig,
  workplace: Workplace,
  console: AgentConsole,
  annotationsTrusted = false,
): Promise<Tool[]> {
  const context = {
    provider: config.model.provider.provider,
    workspace: workplace.workspace,
    settings: config.toolSettings,
  };
  let tools: Tool[];
  try {
    const only = await workplace.linkStarter();
    tools = await createHostedTools(
      context,
      config.agent.tools,
      hostDirs(config.toolSettings),
      only,
    );
  } catch (e) {
    if (e instanceof UnknownToolError) throw new ConfigError(`agents.*.tools: ${e.message}`);
    throw e;
  }
  if (config.allowMcpServers.length === 0) return tools;
  if (workplace.mcpRefusal) {
    console.note(`warning: ${workplace.mcpRefusal}`);
    return tools;
  }
  const { discoverMcpTools } = await import("../mcp/discover.ts");
  console.note(`starting MCP servers: ${config.allowMcpServers.join(", ")}`);
  const mcp = await discoverMcpTools(
    { mcp_servers: config.mcpServers, allow_mcp_servers: config.allowMcpServers },
    context,
    { annotationsTrusted },
  );
  for (const error of mcp.errors) console.note(`warning: ${error}`);
  return [...tools, ...mcp.tools];
}

/** Per-task options. */
export interface TaskOptions {
  trajectoryFile?: string;
  mustPatch?: boolean;
  signal?: AbortSignal;
  /** The conversation to go on with; the turn is appended to it. Fresh when absent. */
  conversation?: LLMMessage[];
  /** Images the user attached to the task (`--image`, `@shot.png`). */
  images?: LLMImage[];
  /** Record into this trajectory (the next turn of a conversation) instead of a new one. */
  recorder?: TrajectoryRecorder;
  /** The session this run continues, recorded in the new trajectory. */
  resumedFrom?: Trajectory["resumed_from"];
  /** A text-only answer ends the turn (interactive); else the model is nudged on. */
  textEndsTurn?: boolean;
  /** The task as the trajectory names it, when the message to the model says something else. */
  recordedTask?: string;
  /** A helper run for a slash command (`/init`): recorded as such, with its conversation. */
  helperOf?: Trajectory["helper_of"];
  /** The trajectory's `session_id` (an ACP session's id); a new one when absent. */
  sessionId?: string;
}

/** Runs one task (or one turn of a conversation); the session's tools keep their state. */
export async function runTask(
  session: Session,
  task: string,
  opts: TaskOptions,
): Promise<{ result: AgentResult; recorder: TrajectoryRecorder }> {
  const { config, console } = session;
  // The start state first: the start checkpoint and the model come after it.
  await session.start?.run();
  const recorder = opts.recorder ?? newRecorder(session, task, opts);
  const trajectoryPath = recorder.path;
  recorder.stepOffset = recorder.data.agent_steps.at(-1)?.step_number ?? 0;
  recorder.recordEvent({ kind: "prompt", text: opts.recordedTask ?? task });
  if (session.subagents) {
    session.subagents.parent = {
      session_id: recorder.data.session_id ?? null,
      trajectory: trajectoryPath,
    };
    session.subagents.signal = opts.signal;
  }
  // The session's background shells are published beside the trajectory it records into now.
  session.shells?.moveTo(trajectoryPath, recorder.data.session_id ?? "");
  if (console.start) {
    console.start({
      task,
      workspace: session.workspace,
      provider: config.model.provider.provider,
      model: config.model.settings.model,
      trajectory: trajectoryPath,
      replay: session.recording !== undefined,
    });
  } else {
    console.note(
      `deft: ${session.recording ? "replaying" : "running"} with ` +
        `${config.model.provider.provider}/${config.model.settings.model} in ` +
        `${session.workspace}; trajectory: ${trajectoryPath}`,
    );
  }
  const lakeview = session.lakeviewClient ? new Lakeview(session.lakeviewClient, task) : undefined;
  const usageBefore = { ...recorder.data.total_usage };
  if (!recorder.data.checkpoints?.length) {
    await checkpoint(session, recorder, { turn: 0, kind: "start", label: "session start" });
  }
  let result: AgentResult;
  let message = task;
  // From before the prompt's hooks (SessionStart, UserPromptSubmit: sandboxed like the shell,
  // through the same proxy) to the turn's end, every network decision is shown and recorded.
  const unwatch = watchNetwork(console, recorder);
  session.recorder = recorder;
  if (session.hooks) {
    session.hooks.setSession(recorder.data.session_id ?? "", trajectoryPath);
    // A stop asked outside a run (a `!command` line in interactive, whose call it refused) does
    // not carry over into this one.
    session.hooks.takeStop();
    const start = session.hooksRestart ??
      (session.hooksStarted ? undefined : opts.resumedFrom ? "resume" : "startup");
    // A conversation started over (/clear, /compact, /resume) gets its own context, not the last.
    const carried = session.hooksRestart ? undefined : session.hooksStartContext;
    session.hooksRestart = undefined;
    const said = await promptWithHooks(session.hooks, task, start, carried);
    session.hooksStarted = true;
    session.hooksStartContext = "blocked" in said ? said.startContext : undefined;
    if ("blocked" in said) {
      console.note(said.blocked);
      if (said.stopped) recorder.data.hook_stop = said.stopped;
      unwatch();
      recorder.finalize(false, said.blocked);
      result = {
        success: false,
        interrupted: false,
        finalResult: said.blocked,
        steps: 0,
        ...(said.stopped ? { stoppedByHook: said.stopped } : {}),
      };
      return { result, recorder };
    }
    message = said.message;
  }
  const hooks = session.hooks;
  // The conversation is this task's own array, so a Stop hook's reason goes on with it.
  const conversation = opts.conversation ?? [];
  const turnOffset = recorder.stepOffset;
  const run = (text: string) => {
    recorder.stepOffset = recorder.data.agent_steps.at(-1)?.step_number ?? 0;
    return runAgent(text, {
      client: session.client,
      executor: session.executor,
      recorder,
      console,
      workspace: session.workspace,
      maxSteps: config.agent.max_steps,
      parallelToolCalls: config.model.settings.parallel_tool_calls,
      mustPatch: opts.mustPatch,
      patch: () => sessionPatch(session),
      gitSandbox: gitSandbox(session.workspace, config.toolSettings),
      signal: opts.signal,
      context: contextManager(config),
      lakeview,
      conversation,
      // The images go with the task itself, not with a Stop hook's reason sent after it.
      images: text === message ? opts.images : undefined,
      textEndsTurn: opts.textEndsTurn,
      instructions: session.instructions.prompt,
      budget: session.budget,
      hookStop: hooks && (() => {
        const stop = hooks.takeStop();
        return stop && stoppedBy(stop);
      }),
      beforeCompact: hooks?.has("PreCompact")
        ? async () => {
          const said = await hooks.preCompact("auto");
          if (!said.block) return true;
          console.note(
            `PreCompact hook ${said.block.by.name} kept the conversation as it is: ` +
              `${said.block.reason} (the model may now refuse it as too long)`,
          );
          return false;
        }
        : undefined,
    });
  };
  try {
    result = await runWithStopHooks(session.hooks, message, run, (t) => console.note(t));
    if (result.stoppedByHook) {
      recorder.data.hook_stop = result.stoppedByHook;
      recorder.flush();
    }
  } finally {
    unwatch();
    recorder.stepOffset = turnOffset;
    (session.turns ??= []).push(turnRecord(session, recorder, usageBefore));
  }
  await checkpoint(session, recorder, {
    turn: lastTurn(recorder.data) + 1,
    kind: "turn",
    label: opts.recordedTask ?? task,
  });
  await lakeview?.drain();
  if (lakeview && lakeview.usage.input_tokens + lakeview.usage.output_tokens > 0) {
    const { provider, model } = lakeview.client;
    const usage = lakeview.usage;
    (session.turns ??= []).push({ provider, model, usage, calls: [], kind: "summaries" });
    // Their spend, charged as they answered, goes into the trajectory's budget record too.
    if (session.budget) {
      recorder.data.budget = session.budget.record();
      recorder.flush();
    }
  }
  console.summary({
    success: result.success,
    steps: result.steps,
    usage: recorder.data.total_usage,
    seconds: recorder.data.execution_time,
    result: result.finalResult,
  });
  console.note(`trajectory saved to ${trajectoryPath}`);
  return { result, recorder };
}

/**
 * Takes a checkpoint of the workspace into the session's store (./checkpoints.ts) and records it
 * in the trajectory. Off with the config's `checkpoints: false`, in a container's folder that is
 * in no repository and in a replay; a failure is a warning, and the session takes no more.
 */
async function checkpoint(
  session: Session,
  recorder: TrajectoryRecorder,
  what: { turn: number; kind: "start" | "turn"; label: string },
): Promise<void> {
  if (session.config.checkpoints === false || session.recording || recorder.data.helper_of) return;
  const sessionId = recorder.data.session_id ?? "";
  try {
    if (session.checkpointPlace?.sessionId !== sessionId) {
      // On the host, a folder in no repository gets a store of its own (./checkpoint_place.ts).
      const repository = sessionId !== "" &&
        (session.workplace.onHost || await session.workplace.isRepository());
      session.checkpointPlace = {
        sessionId,
        at: repository ? await session.workplace.checkpointPlace(sessionId, recorder.path) : null,
      };
    }
    const at = session.checkpointPlace.at;
    if (!at) return;
    const record = await takeCheckpoint(at, recorder.data, what);
    recorder.flush();
    if (record.left_out) {
      session.console.note(
        `checkpoint ${record.id} does not hold ${record.left_out.length} ` +
          `large or binary new file(s): ${record.left_out.slice(0, 5).join(", ")}` +
          `${record.left_out.length > 5 ? ", …" : ""}; a rewind leaves them as they are.`,
      );
    }
  } catch (e) {
    if (e instanceof SandboxUnavailableError) throw e;
    session.checkpointPlace = { sessionId, at: null };
    session.console.note(
      `warning: no checkpoint after turn ${what.turn} (${(e as Error).message}); this session ` +
        "takes no more, and cannot be rewound past this point.",
    );
  }
}

/** The turn that just ran in `recorder`: its steps after `recorder.stepOffset`. */
function turnRecord(session: Session, recorder: TrajectoryRecorder, before: LLMUsage): TurnRecord {
  const after = recorder.data.total_usage;
  const usage = Object.fromEntries(
    Object.entries(after).map(([key, value]) => [key, value - before[key as keyof LLMUsage]]),
  ) as unknown as LLMUsage;
  const steps = recorder.data.agent_steps.filter((s) => s.step_number > recorder.stepOffset);
  // The edits a call made through the editor (a `Task` apply) follow it, as the model's own.
  const calls = steps.flatMap((step) =>
    step.tool_calls.flatMap((call) => [{
      name: call.name,
      arguments: call.arguments,
      success: step.tool_results.some((r) => r.call_id === call.call_id && r.success),
    }, ...step.tool_results.find((r) => r.call_id === call.call_id)?.edits ?? []])
  );
  const { provider, settings } = session.config.model;
  return { provider: provider.provider, model: settings.model, usage, calls, kind: "turn" };
}

function newRecorder(session: Session, task: string, opts: TaskOptions): TrajectoryRecorder {
  const { config } = session;
  // The place as the trajectory records it: the workspace, and the container's marker if any.
  const { workspace: working_dir, ...where } = session.workplace.place;
  // The id the session's store was made for early, unless this trajectory has one of its own.
  const planned = session.early;
  session.early = undefined;
  const sessionId = opts.sessionId ?? planned?.sessionId ?? newSessionId();
  if (planned?.sessionId !== sessionId) planned?.release();
  const recorder = new TrajectoryRecorder(
    resolve(opts.trajectoryFile ?? defaultTrajectoryPath(sessionId)),
    {
      session_id: sessionId,
      task: opts.recordedTask ?? task,
      working_dir,
      provider: config.model.provider.provider,
      model: config.model.settings.model,
      max_steps: config.agent.max_steps,
      resumed_from: opts.resumedFrom,
      ...(opts.helperOf && { helper_of: opts.helperOf }),
      ...where,
    },
    [config.model.provider.api_key, config.lakeview?.provider.api_key],
  );
  recorder.data.project_instructions = session.instructions.files.map((f) => ({
    path: f.path,
    bytes: f.bytes,
    truncated: f.truncated,
  }));
  return recorder;
}

function contextManager(config: RunConfig): ContextManager | undefined {
  const window = config.model.settings.context_window;
  if (!window) return undefined;
  const answer = config.model.settings.max_tokens ?? config.model.settings.max_completion_tokens;
  return new ContextManager({ window, reserve: answer });
}
