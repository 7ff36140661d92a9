/**
 * What a report shows, read from disk: a run (a trajectory file, or a session id), or a batch (its
 * output folder: results.jsonl, each task's result.json, trajectory.json and patch.diff, and
 * predictions.jsonl). Reading never fails on one bad file: what cannot be read is shown as a note.
 */
import { dirname, join, resolve } from "node:path";
import { readTrajectory, trajectoriesDir, type Trajectory } from "../trajectory/recorder.ts";
import { costOf } from "../llm/prices.ts";
import { readOwnText } from "../policy/own_file.ts";
import type { ConversationPart } from "./timeline.ts";
import { predictionsFile, resultsFile, taskPaths, type TaskResult } from "../batch/results.ts";

/** One run as the report shows it. */
export interface RunModel {
  /** What the run is called in the page: the task id in a batch, else the session id or file. */
  name: string;
  path: string;
  trajectory: Trajectory | null;
  /** Why the trajectory could not be read, when it could not. */
  problem: string | null;
  /** The task's result, in a batch. */
  result: TaskResult | null;
  /** The final patch, when there is one. */
  patch: string | null;
  /**
   * Every file of the conversation, oldest first, this run's own among them, when /compact spread
   * it over several (each /compact goes on in a new file); absent otherwise.
   */
  parts?: ConversationPart[];
  /**
   * The child agents its `Task` calls ran, by the trajectory path each recorded; for one not
   * shown, why (children.ts).
   */
  children?: Map<string, RunModel | string>;
}

/** One batch as the report shows it. */
export interface BatchModel {
  dir: string;
  runs: RunModel[];
}

/** What one PATH of `deft report` names. */
export type ReportInput = { kind: "run"; run: RunModel } | { kind: "batch"; batch: BatchModel };

/** A PATH that names no trajectory, session or batch; the message says what to give instead. */
export class ReportInputError extends Error {
  override name = "ReportInputError";
}

/** Largest batch file read (results, predictions, a task's result or patch). */
export const MAX_REPORT_FILE_BYTES = 256 * 1024 * 1024;

/**
 * Reads a file of a batch's output folder as text (bytes that are not UTF-8 become U+FFFD). The
 * folder is whatever PATH names, so the file is read as Deft's own files are: a regular file
 * within MAX_REPORT_FILE_BYTES, never a FIFO or device (an `OwnFileError`).
 */
export async function readText(path: string): Promise<string> {
  return await readOwnText(path, { limit: MAX_REPORT_FILE_BYTES, what: "a batch's file" });
}

async function stat(path: string): Promise<Deno.FileInfo | undefined> {
  return await Deno.stat(path).catch(() => undefined);
}

/** Reads what `path` names: a batch folder, a trajectory file, or a session id. */
export async function loadInput(path: string): Promise<ReportInput> {
  const info = await stat(path);
  if (info?.isDirectory) {
    const hasBatch = await stat(resultsFile(path)) !== undefined ||
      await stat(predictionsFile(path)) !== undefined;
    if (!hasBatch) {
      throw new ReportInputError(
        `${path} is a folder without results.jsonl or predictions.jsonl, so not a batch's output ` +
          `folder. Give the folder deft batch --out wrote, a trajectory file, or a session id ` +
          `(deft sessions lists them).`,
      );
    }
    return { kind: "batch", batch: await loadBatch(path) };
  }
  const run = info?.isFile
    ? await loadRun(path, sessionName(path))
    : await loadRun(await locateSession(path), path);
  if (run.trajectory) {
    const parts = await conversationParts({ path: run.path, trajectory: run.trajectory });
    if (parts.length > 1) run.parts = parts;
  }
  return { kind: "run", run };
}

/** Files followed, at most, to put a conversation split by /compact together. */
const MAX_PARTS = 100;
/** Files of a folder read, at most, to find the ones that go on from a compacted conversation. */
const MAX_SCANNED = 1000;

/**
 * The files of `part`'s conversation, oldest first: the ones it goes on from after a /compact
 * (`resumed_from` with `by: "compact"`) and the ones that go on from it, looked for in its own
 * folder only (where Deft writes them), never following a file outside it.
 */
async function conversationParts(part: ConversationPart): Promise<ConversationPart[]> {
  const dir = dirname(resolve(part.path));
  const seen = new Set([resolve(part.path)]);
  const read = async (path: string) => {
    const full = resolve(dir, path);
    if (dirname(full) !== dir || seen.has(full)) return undefined;
    seen.add(full);
    const trajectory = await readTrajectory(full).catch(() => undefined);
    return trajectory && { path: full, trajectory };
  };
  const parts = [part];
  while (parts.length < MAX_PARTS) {
    const from = parts[0].trajectory.resumed_from;
    if (from?.by !== "compact" || typeof from.path !== "string") break;
    const earlier = await read(from.path);
    if (!earlier) break;
    parts.unshift(earlier);
  }
  // Later files: only when the last one known was compacted, read once from the folder.
  if (!parts.at(-1)!.trajectory.compactions?.length) return parts;
  const continuing = new Map<string, ConversationPart>();
  let looked = 0;
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.endsWith(".json")) continue;
      if (++looked > MAX_SCANNED) break;
      const found = await read(entry.name);
      const from = found?.trajectory.resumed_from;
      if (found && from?.by === "compact" && typeof from.path === "string") {
        continuing.set(resolve(dir, from.path), found);
      }
    }
  } catch {
    // An unreadable folder: the files known so far.
  }
  while (parts.length < MAX_PARTS) {
    const next = continuing.get(resolve(parts.at(-1)!.path));
    if (!next) break;
    parts.push(next);
  }
  return parts;
}

function sessionName(path: string): string {
  const m = /trajectory_([\w.-]+)\.json$/.exec(path);
  return m ? m[1] : path;
}

/**
 * The trajectory of session `id`, found as `deft run --resume ID` finds it: `trajectory_ID.json`
 * in the trajectories folder, else the file there whose `session_id` is ID.
 */
async function locateSession(id: string): Promise<string> {
  if (!/^[\w.-]+$/.test(id) || id.includes("..")) {
    throw new ReportInputError(
      `${id}: no such file or folder, and not a session id. Give a trajectory file, a batch ` +
        `output folder, or a session id from deft sessions.`,
    );
  }
  const dir = trajectoriesDir();
  const direct = join(dir, `trajectory_${id}.json`);
  if (await stat(direct)) return direct;
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.endsWith(".json")) continue;
      const data = await readTrajectory(join(dir, entry.name)).catch(() => undefined);
      if (data?.session_id === id) return join(dir, entry.name);
    }
  } catch {
    // No trajectories folder: the same answer as no such session.
  }
  throw new ReportInputError(
    `${id}: no such file or folder, and no session ${id} in ${dir}. Give a trajectory file, a ` +
      `batch output folder, or a session id from deft sessions.`,
  );
}

/** Reads one run's trajectory (and patch and result, when given). */
export async function loadRun(
  path: string,
  name: string,
  extra: { result?: TaskResult | null; patch?: string | null } = {},
): Promise<RunModel> {
  let trajectory: Trajectory | null = null;
  let problem: string | null = null;
  try {
    trajectory = await readTrajectory(path);
  } catch (e) {
    problem = e instanceof Deno.errors.NotFound
      ? "no trajectory was recorded"
      : `the trajectory could not be read: ${(e as Error).message}`;
  }
  return {
    name,
    path,
    trajectory,
    problem,
    result: extra.result ?? null,
    patch: extra.patch ?? null,
  };
}

// Task ids come from a task file; one that would leave the batch folder is not followed.
function safeId(id: string): boolean {
  return id !== "" && id !== "." && id !== ".." && !/[\/\\\0]/.test(id);
}

async function jsonLines(path: string): Promise<unknown[]> {
  const content = await readText(path).catch(() => "");
  const values = [];
  for (const line of content.split("\n")) {
    if (!line.trim()) continue;
    try {
      values.push(JSON.parse(line));
    } catch {
      // A torn last line of a batch that was killed: the rest still counts.
    }
  }
  return values;
}

/** Reads a batch's output folder: the last result of each task, in task order. */
export async function loadBatch(dir: string): Promise<BatchModel> {
  const results = new Map<string, TaskResult>();
  for (const value of await jsonLines(resultsFile(dir))) {
    const r = value as TaskResult;
    if (r && typeof r.id === "string" && typeof r.status === "string") results.set(r.id, r);
  }
  const patches = new Map<string, string>();
  for (const value of await jsonLines(predictionsFile(dir))) {
    const p = value as { instance_id?: unknown; model_patch?: unknown };
    if (typeof p?.instance_id === "string" && typeof p.model_patch === "string") {
      patches.set(p.instance_id, p.model_patch);
    }
  }
  // Interrupted tasks are only in their result.json; tasks with a prediction only, in predictions.
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isDirectory || results.has(entry.name) || !safeId(entry.name)) continue;
    const r = await readText(taskPaths(dir, entry.name).result).then(JSON.parse).catch(() => null);
    if (r && typeof r.status === "string") results.set(entry.name, { ...r, id: entry.name });
  }
  const ordered = [...results.values()].sort((a, b) =>
    (a.index ?? 0) - (b.index ?? 0) || a.id.localeCompare(b.id)
  );
  const runs: RunModel[] = [];
  for (const result of ordered) {
    const paths = safeId(result.id) ? taskPaths(dir, result.id) : undefined;
    let patch = patches.get(result.id) ?? null;
    if (patch === null && paths) patch = await readText(paths.patch).catch(() => null);
    runs.push(
      paths
        ? await loadRun(paths.trajectory, result.id, { result, patch })
        : { name: result.id, path: "", trajectory: null, problem: "unsafe task id", result, patch },
    );
  }
  return { dir, runs };
}

/** The numbers a batch table shows for one run. */
export interface RunStats {
  status: string;
  steps: number | null;
  tokens: number | null;
  cost: number | null;
  seconds: number | null;
  toolErrors: number | null;
  /** Lines added and removed by the patch; null without one. */
  patchLines: number | null;
}

/** A conversation's numbers over all its files: steps, tokens, cost and seconds added up. */
export interface ConversationStats {
  steps: number;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number };
  /** Null when a file's model has no known price. */
  cost: number | null;
  seconds: number;
}

/** Adds up the files of a conversation /compact spread over several. */
export function conversationStats(parts: readonly ConversationPart[]): ConversationStats {
  const total: ConversationStats = {
    steps: 0,
    usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0 },
    cost: 0,
    seconds: 0,
  };
  for (const part of parts) {
    const run = { name: "", problem: null, result: null, patch: null, ...part };
    const stats = runStats(run);
    const cost = listCost(run);
    total.steps += stats.steps ?? 0;
    total.seconds += stats.seconds ?? 0;
    total.cost = total.cost === null || cost === null ? null : total.cost + cost;
    const u = part.trajectory.total_usage;
    for (const key of Object.keys(total.usage) as (keyof ConversationStats["usage"])[]) {
      total.usage[key] += number(u?.[key]) ?? 0;
    }
  }
  return total;
}

/** The numbers of one run, from its result where it has one, else its trajectory. */
export function runStats(run: RunModel): RunStats {
  const t = run.trajectory;
  const r = run.result;
  const usage = t?.total_usage;
  const toolErrors = t
    ? t.agent_steps.reduce(
      (n, s) =>
        n +
        (Array.isArray(s?.tool_results) ? s.tool_results : []).filter((x) => !x?.success).length,
      0,
    )
    : null;
  const fromTrajectory = usage
    ? (number(usage.input_tokens) ?? 0) + (number(usage.output_tokens) ?? 0)
    : null;
  return {
    status: typeof r?.status === "string" ? r.status : runOutcome(run),
    steps: number(r?.steps) ?? t?.agent_steps.length ?? null,
    tokens: number(r?.tokens?.total) ?? fromTrajectory,
    cost: number(r?.cost) ?? listCost(run),
    seconds: number(r?.duration) ?? number(t?.execution_time),
    toolErrors,
    patchLines: run.patch ? patchLines(run.patch) : null,
  };
}

// Files are data: a field of the wrong type counts as absent, never as a number.
function number(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** How a run ended, from its trajectory: completed, failed, interrupted, or unfinished. */
export function runOutcome(run: RunModel): string {
  const t = run.trajectory;
  if (!t) return "no trajectory";
  if (t.success) return "completed";
  if (t.agent_steps.at(-1)?.state === "interrupted") return "interrupted";
  return t.end_time ? "failed" : "unfinished";
}

/** Lines a patch adds or removes (file headers not counted). */
export function patchLines(patch: string): number {
  let n = 0;
  for (const line of patch.split("\n")) {
    if (
      (line.startsWith("+") && !line.startsWith("+++")) ||
      (line.startsWith("-") && !line.startsWith("---"))
    ) n++;
  }
  return n;
}

/**
 * What a run without a recorded cost cost at the list prices Deft knows (`deft run` used the
 * `prices` config too, which the file does not record); null for a model without a known price.
 */
export function listCost(run: RunModel): number | null {
  const t = run.trajectory;
  if (!t?.total_usage) return null;
  const u = t.total_usage;
  const usage = {
    input_tokens: number(u.input_tokens) ?? 0,
    output_tokens: number(u.output_tokens) ?? 0,
    cache_creation_input_tokens: number(u.cache_creation_input_tokens) ?? 0,
    cache_read_input_tokens: number(u.cache_read_input_tokens) ?? 0,
    reasoning_tokens: number(u.reasoning_tokens) ?? 0,
  };
  return costOf(usage, String(t.provider), String(t.model));
}

/**
 * A call's approval decision in words, from its recorded result: whether it was let through
 * ("allowed"/"denied") and who decided (`decided_by` with its detail: the mode, the user's answer
 * and reason, the "always" prefix, a rule or hook). Undefined when the file records none (older
 * files); a recorded field that is not the expected type is left out, as the file is data.
 */
export function approvalWords(
  result: { approval?: unknown } | undefined,
): { denied: boolean; words: string } | undefined {
  const a = result?.approval;
  if (!a || typeof a !== "object") return undefined;
  const field = (name: string): string | undefined => {
    const value = (a as Record<string, unknown>)[name];
    return typeof value === "string" ? value : undefined;
  };
  const nested = (name: string, key: string): string | undefined => {
    const value = (a as Record<string, unknown>)[name];
    if (!value || typeof value !== "object") return undefined;
    const inner = (value as Record<string, unknown>)[key];
    return typeof inner === "string" ? inner : undefined;
  };
  const denied = field("decision") === "deny";
  const by = field("decided_by") ?? "unknown";
  const detail: Record<string, string | undefined> = {
    mode: `mode ${field("mode") ?? "?"}${
      (a as { unasked?: unknown }).unasked === true ? " (a reader, run sandboxed)" : ""
    }`,
    session: `this session: approval off`,
    always: `always for ${field("always") ?? "?"}`,
    user: `the user: ${field("answer") ?? "?"}${
      field("answer") === "always" && field("always") ? ` (${field("always")})` : ""
    }`,
    recording: "the recording (replay)",
    rule: `rule ${nested("rule", "text") ?? "?"}${
      nested("rule", "source") ? ` from ${nested("rule", "source")}` : ""
    }`,
    hook: `hook ${nested("hook", "name") ?? "?"}`,
  };
  const reason = field("reason");
  const words = `${denied ? "denied" : "allowed"} by ${detail[by] ?? by}${
    denied && reason ? ` — ${reason}` : ""
  }`;
  return { denied, words };
}
