/**
 * `deft run`: one task, start to finish. Exit codes: 0 the task completed, 1 it failed or ran out of
 * steps, 2 usage or configuration errors, 130 interrupted (Ctrl-C). Progress goes to stderr;
 * `--json` prints a summary on stdout.
 */
import { resolve } from "node:path";
import { runAgent } from "../agent/agent.ts";
import { StderrConsole } from "../agent/console.ts";
import { workspacePatch } from "../agent/patch.ts";
import { compareRuns, type Divergence } from "../agent/replay.ts";
import { ConfigError, loadConfig } from "../config/load.ts";
import { type ConfigOverrides, resolveRunConfig, type RunConfig } from "../config/resolve.ts";
import { createClient } from "../llm/client.ts";
import { ReplayClient } from "../llm/replay.ts";
import type { LLMClient } from "../llm/types.ts";
import { realWorkspace } from "../policy/workspace.ts";
import { ToolExecutor } from "../tools/executor.ts";
import { createTools, UnknownToolError } from "../tools/registry.ts";
import {
  defaultTrajectoryPath,
  readTrajectory,
  type Trajectory,
  TrajectoryRecorder,
} from "../trajectory/recorder.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";

/** Options of `deft run`, as commander hands them over. */
export interface RunOptions extends ConfigOverrides {
  file?: string;
  workingDir?: string;
  mustPatch?: boolean;
  patchPath?: string;
  configFile?: string;
  trajectoryFile?: string;
  json?: boolean;
  replay?: string;
}

/** Runs one task; returns the exit code. */
export async function runCommand(taskArg: string | undefined, opts: RunOptions): Promise<number> {
  const recording = opts.replay ? await readRecording(opts.replay) : undefined;
  const task = await resolveTask(taskArg, opts.file, recording);
  let workspace: string;
  try {
    workspace = await realWorkspace(opts.workingDir ?? Deno.cwd());
  } catch (e) {
    throw new UsageError(`${(e as Error).message} Pass an existing directory with -w.`);
  }
  const loaded = await loadConfig(opts.configFile);
  for (const warning of loaded.warnings) writeStderr(`warning: ${warning}`);
  const overrides: ConfigOverrides = { ...opts };
  if (recording) {
    overrides.provider ??= recording.provider;
    overrides.model ??= recording.model;
  }
  const config = resolveRunConfig(loaded, overrides, undefined, !recording);
  const console = new StderrConsole();
  const client: LLMClient = recording ? new ReplayClient(recording) : createClient(
    config.model,
    ({ attempt, delayMs, error }) =>
      console.note(
        `model call failed (${(error as Error).message}); retry ${attempt} in ` +
          `${(delayMs / 1000).toFixed(1)} s`,
      ),
    Number(Deno.env.get("DEFT_RETRY_BASE_MS") ?? 1000),
  );
  const executor = new ToolExecutor(buildTools(config, workspace));
  const trajectoryPath = resolve(opts.trajectoryFile ?? defaultTrajectoryPath());
  const recorder = new TrajectoryRecorder(
    trajectoryPath,
    {
      task,
      provider: config.model.provider.provider,
      model: config.model.settings.model,
      max_steps: config.agent.max_steps,
    },
    [config.model.provider.api_key, config.lakeview?.provider.api_key],
  );

  const controller = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts++;
    if (interrupts > 1) Deno.exit(130);
    console.note("interrupted: stopping the run (press Ctrl-C again to quit at once)");
    controller.abort(new Error("interrupted"));
    // Closing the tools kills a running command, so the step ends now instead of at its timeout.
    void executor.closeTools();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);

  console.note(
    `deft: ${recording ? "replaying" : "running"} with ${config.model.provider.provider}/` +
      `${config.model.settings.model} in ${workspace}; trajectory: ${trajectoryPath}`,
  );
  let result;
  try {
    result = await runAgent(task, {
      client,
      executor,
      recorder,
      console,
      workspace,
      maxSteps: config.agent.max_steps,
      parallelToolCalls: config.model.settings.parallel_tool_calls,
      mustPatch: opts.mustPatch,
      signal: controller.signal,
    });
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    for (const e of await executor.closeTools()) console.note(`warning: ${e.message}`);
  }

  let patchPath: string | undefined;
  if (opts.patchPath) {
    patchPath = resolve(opts.patchPath);
    const patch = await workspacePatch(workspace).catch((e) => {
      console.note(`warning: could not compute the patch: ${(e as Error).message}`);
      return "";
    });
    await Deno.writeTextFile(patchPath, patch);
  }
  const divergences = recording ? compareRuns(recording, recorder.data) : undefined;
  if (divergences) reportDivergences(divergences, console.note.bind(console));
  console.summary({
    success: result.success,
    steps: result.steps,
    usage: recorder.data.total_usage,
    seconds: recorder.data.execution_time,
    result: result.finalResult,
  });
  console.note(`trajectory saved to ${trajectoryPath}`);

  const exitCode = result.interrupted ? 130 : result.success && !divergences?.length ? 0 : 1;
  if (opts.json) {
    await writeStdout(
      JSON.stringify({
        success: result.success,
        interrupted: result.interrupted,
        exit_code: exitCode,
        final_result: result.finalResult,
        steps: result.steps,
        provider: config.model.provider.provider,
        model: config.model.settings.model,
        usage: recorder.data.total_usage,
        execution_time: recorder.data.execution_time,
        trajectory: trajectoryPath,
        patch_path: patchPath ?? null,
        ...(divergences ? { divergences } : {}),
      }) + "\n",
    );
  }
  return exitCode;
}

function buildTools(config: RunConfig, workspace: string) {
  try {
    return createTools(
      { provider: config.model.provider.provider, workspace, settings: config.toolSettings },
      config.agent.tools,
    );
  } catch (e) {
    if (e instanceof UnknownToolError) throw new ConfigError(`agents.*.tools: ${e.message}`);
    throw e;
  }
}

async function readRecording(path: string): Promise<Trajectory> {
  try {
    return await readTrajectory(path);
  } catch (e) {
    throw new UsageError(`cannot replay ${path}: ${(e as Error).message}`);
  }
}

async function resolveTask(
  task: string | undefined,
  file: string | undefined,
  recording: Trajectory | undefined,
): Promise<string> {
  if (task !== undefined && file !== undefined) {
    throw new UsageError("give the task either as an argument or with --file, not both.");
  }
  if (file !== undefined) {
    try {
      task = await Deno.readTextFile(file);
    } catch (e) {
      throw new UsageError(`cannot read the task file ${file}: ${(e as Error).message}`);
    }
  }
  task ??= recording?.task;
  if (task === undefined || task.trim() === "") {
    throw new UsageError(
      'no task: pass it as an argument (deft run "fix the bug") or with -f FILE.',
    );
  }
  return task;
}

function reportDivergences(divergences: Divergence[], note: (s: string) => void): void {
  if (divergences.length === 0) {
    note("replay: every tool result matches the recording");
    return;
  }
  note(`replay: ${divergences.length} difference(s) from the recording:`);
  for (const d of divergences) {
    const what = d.tool ? `${d.tool} (${d.call_id}) ${d.field}` : d.field;
    note(
      `  step ${d.step}: ${what}: recorded ${clip(d.recorded)}, replayed ${clip(d.replayed)}`,
    );
  }
}

function clip(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
