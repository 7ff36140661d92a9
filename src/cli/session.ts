/**
 * What `deft run` and `deft interactive` share: loading the configuration, building the model
 * client and the tools once, and running one task with its own conversation and trajectory.
 */
import { resolve } from "node:path";
import { type AgentResult, runAgent } from "../agent/agent.ts";
import type { AgentConsole } from "../agent/console.ts";
import { ContextManager } from "../agent/context.ts";
import { Lakeview } from "../agent/lakeview.ts";
import { ConfigError, loadConfig } from "../config/load.ts";
import { type ConfigOverrides, resolveRunConfig, type RunConfig } from "../config/resolve.ts";
import { createClient } from "../llm/client.ts";
import { ReplayClient } from "../llm/replay.ts";
import type { LLMClient } from "../llm/types.ts";
import { ToolExecutor } from "../tools/executor.ts";
import type { Tool } from "../tools/base.ts";
import { UnknownToolError } from "../tools/catalog.ts";
import { createHostedTools } from "../tools/host/remote.ts";
import { hostDirs, workspaceOf } from "./context.ts";
import {
  defaultTrajectoryPath,
  type Trajectory,
  TrajectoryRecorder,
} from "../trajectory/recorder.ts";
import { writeStderr } from "./io.ts";
import { chooseConsole, type OutputFormat } from "./console/choose.ts";
import type { ColorMode } from "./console/style.ts";

/** Options shared by `run` and `interactive`. */
export interface SessionOptions extends ConfigOverrides {
  workingDir?: string;
  configFile?: string;
  outputFormat?: OutputFormat;
  color?: ColorMode;
}

/** A configured model, tool set and console, living across tasks. */
export interface Session {
  config: RunConfig;
  workspace: string;
  client: LLMClient;
  lakeviewClient?: LLMClient;
  executor: ToolExecutor;
  console: AgentConsole;
  recording?: Trajectory;
}

/** Loads the configuration and builds the client and tools. */
export async function openSession(opts: SessionOptions, recording?: Trajectory): Promise<Session> {
  const workspace = await workspaceOf(opts.workingDir);
  const loaded = await loadConfig(opts.configFile);
  for (const warning of loaded.warnings) writeStderr(`warning: ${warning}`);
  const overrides: ConfigOverrides = { ...opts };
  if (recording) {
    overrides.provider ??= recording.provider;
    overrides.model ??= recording.model;
  }
  const config = resolveRunConfig(loaded, overrides, undefined, !recording);
  const console = chooseConsole({ outputFormat: opts.outputFormat, color: opts.color, workspace });
  const client: LLMClient = recording ? new ReplayClient(recording, workspace) : createClient(
    config.model,
    ({ attempt, delayMs, reason }) =>
      console.note(
        `model call failed (${reason}); retry ${attempt} in ${(delayMs / 1000).toFixed(1)} s`,
      ),
    Number(Deno.env.get("DEFT_RETRY_BASE_MS") ?? 1000),
  );
  // Step summaries use their own model and back off briefly: they must not hold up the run.
  const lakeviewClient = config.lakeview && !recording
    ? createClient(config.lakeview, undefined, 500)
    : undefined;
  let tools: Tool[];
  try {
    tools = await createHostedTools(
      { provider: config.model.provider.provider, workspace, settings: config.toolSettings },
      config.agent.tools,
      hostDirs(config.toolSettings),
    );
  } catch (e) {
    if (e instanceof UnknownToolError) throw new ConfigError(`agents.*.tools: ${e.message}`);
    throw e;
  }
  if (config.allowMcpServers.length > 0) {
    const { discoverMcpTools } = await import("../mcp/discover.ts");
    console.note(`starting MCP servers: ${config.allowMcpServers.join(", ")}`);
    const mcp = await discoverMcpTools(
      { mcp_servers: config.mcpServers, allow_mcp_servers: config.allowMcpServers },
      { provider: config.model.provider.provider, workspace, settings: config.toolSettings },
    );
    for (const error of mcp.errors) console.note(`warning: ${error}`);
    tools = [...tools, ...mcp.tools];
  }
  return {
    config,
    workspace,
    client,
    lakeviewClient,
    executor: new ToolExecutor(tools),
    console,
    recording,
  };
}

/** Per-task options. */
export interface TaskOptions {
  trajectoryFile?: string;
  mustPatch?: boolean;
  signal?: AbortSignal;
}

/** Runs one task in a fresh conversation; the session's tools keep their state. */
export async function runTask(
  session: Session,
  task: string,
  opts: TaskOptions,
): Promise<{ result: AgentResult; recorder: TrajectoryRecorder }> {
  const { config, console } = session;
  const trajectoryPath = resolve(opts.trajectoryFile ?? defaultTrajectoryPath());
  const recorder = new TrajectoryRecorder(
    trajectoryPath,
    {
      task,
      working_dir: session.workspace,
      provider: config.model.provider.provider,
      model: config.model.settings.model,
      max_steps: config.agent.max_steps,
    },
    [config.model.provider.api_key, config.lakeview?.provider.api_key],
  );
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
  const result = await runAgent(task, {
    client: session.client,
    executor: session.executor,
    recorder,
    console,
    workspace: session.workspace,
    maxSteps: config.agent.max_steps,
    parallelToolCalls: config.model.settings.parallel_tool_calls,
    mustPatch: opts.mustPatch,
    signal: opts.signal,
    context: contextManager(config),
    lakeview,
  });
  await lakeview?.drain();
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

function contextManager(config: RunConfig): ContextManager | undefined {
  const window = config.model.settings.context_window;
  if (!window) return undefined;
  const answer = config.model.settings.max_tokens ?? config.model.settings.max_completion_tokens;
  return new ContextManager({ window, reserve: answer });
}
