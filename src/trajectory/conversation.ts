/**
 * Resuming: finding a workspace's sessions among the recorded trajectories and rebuilding the
 * conversation a trajectory recorded, so a new run can go on where the old one stopped.
 */
import { basename } from "node:path";
import type { LLMMessage } from "../llm/types.ts";
import { toolMessage } from "../llm/tool_message.ts";
import { journalPath } from "./journal.ts";
import {
  checkTrajectory,
  type ContainerMarker,
  type InteractionRanges,
  readTrajectory,
  trajectoriesDir,
  type Trajectory,
  TRAJECTORY_FORMAT_VERSION,
} from "./recorder.ts";

/** One recorded session, as `deft sessions` lists it. */
export interface SessionSummary {
  id: string;
  path: string;
  started: string;
  task: string;
  steps: number;
  outcome: "completed" | "failed" | "interrupted" | "unfinished";
  working_dir?: string;
  /** The model's last words in the session (its answer, else its last reply), if any. */
  last_reply?: string;
  /** A helper session (`/init`): the command and the conversation it was typed in. */
  helper_of?: { command: string; session_id: string | null; path: string | null };
  /** How many checkpoints it took (absent: none recorded). */
  checkpoints?: number;
  /** The session that goes on from this one's /compact summary (listed, hence newer). */
  compacted_into?: string;
  /** Its conversation is a /compact summary (resumed as such; none goes on from it yet). */
  compacted?: true;
}

/** What a listing holds: every session, or the user's conversations only (for pickers). */
export type SessionFilter = "all" | "conversations";

/**
 * Where a session works: its workspace path, and the container its tools run in (absent: the
 * host). The same path names different files on the host and inside a container, and in
 * containers of different images.
 */
export interface SessionPlace {
  workspace: string;
  container?: ContainerMarker;
}

/**
 * True when `data` was recorded in `place`: the same workspace path, on the host for a host
 * place (trajectories without a container marker, older ones included); for a container place,
 * in a container too, of the same image (or the very same container).
 */
export function recordedIn(data: Trajectory, place: SessionPlace): boolean {
  if (data.working_dir !== place.workspace) return false;
  const recorded = data.container;
  if (!place.container || !recorded) return !place.container && !recorded;
  if (sameContainer(recorded.id, place.container.id)) return true;
  const [a, b] = [recorded.image, place.container.image];
  return a !== null && b !== null && imageKey(a) === imageKey(b);
}

/**
 * True when two ids name one container: equal, or one a prefix (12 hex digits at least) of the
 * other (`--docker-container-id` takes the short id Deft prints; the trajectory has the full one).
 */
export function sameContainer(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return /^[0-9a-f]{12,}$/.test(short) && long.startsWith(short);
}

/** Where a trajectory was recorded, for messages: `/testbed in a container of IMAGE`. */
export function placeText(place: SessionPlace): string {
  const { workspace, container } = place;
  if (!container) return workspace;
  return container.image === null
    ? `${workspace} in the container ${container.id}`
    : `${workspace} in a container of ${container.image}`;
}

/**
 * An image name as runtimes mean it: `deft-test` is `deft-test:latest`, and podman's
 * `localhost/` or Docker Hub's `docker.io/library/` prefix changes nothing.
 */
export function imageKey(image: string): string {
  let name = image.trim().replace(/^(docker\.io\/library\/|docker\.io\/|localhost\/)/, "");
  if (name.includes("@")) return name;
  const last = name.slice(name.lastIndexOf("/") + 1);
  if (!last.includes(":")) name += ":latest";
  return name;
}

/** A session that cannot be resumed; the message says why and what to do. */
export class ResumeError extends Error {
  override name = "ResumeError";
}

/** Files read when listing, newest first; older ones are not looked at. */
const SCANNED_FILES = 500;

/**
 * The sessions recorded in `where` (a host folder, or a place), newest first. Unreadable files,
 * and files without the fields a listing needs (checked by shape), are skipped: one bad file
 * never hides the others. With `filter` "conversations", the user's conversations only: no
 * helper session (`/init`), and a conversation compacted with /compact once, by the session
 * that goes on from the summary.
 */
export async function listSessions(
  where: string | SessionPlace,
  limit = 20,
  filter: SessionFilter = "all",
): Promise<SessionSummary[]> {
  const place = typeof where === "string" ? { workspace: where } : where;
  const found: SessionSummary[] = [];
  // Files come newest first: a continuation after /compact is seen before the session it
  // continues.
  const continued = new Map<string, string>();
  for (const path of await trajectoryFiles()) {
    let data: Trajectory;
    try {
      data = checkTrajectory(await readTrajectory(path), path, "list");
    } catch {
      continue;
    }
    if (!recordedIn(data, place) || !data.format_version) continue;
    const summary = summarize(path, data);
    const from = data.resumed_from;
    if (from?.by === "compact") continued.set(from.path, summary.id);
    const into = continued.get(path);
    if (into !== undefined) summary.compacted_into = into;
    if (filter === "conversations" && (summary.helper_of || into !== undefined)) continue;
    found.push(summary);
    if (found.length >= limit) break;
  }
  return found;
}

/**
 * Removes the trajectory file of a session recorded in `where` (`idOrFile`: its id or file, as
 * for a resume); returns what it was. Throws ResumeError for a session that is not there, or a
 * path that is not a regular file (a link is left alone: its target is not Deft's to remove).
 */
export async function removeSession(
  idOrFile: string,
  where: string | SessionPlace,
): Promise<{ path: string; trajectory: Trajectory }> {
  const found = await loadResumable(idOrFile, where);
  const info = await Deno.lstat(found.path);
  if (!info.isFile) {
    throw new ResumeError(`${found.path} is not a regular file: left alone.`);
  }
  await Deno.remove(found.path);
  // A run that never ended leaves its journal beside it; never followed if it is a link.
  const journal = journalPath(found.path);
  if ((await Deno.lstat(journal).catch(() => undefined))?.isFile) {
    await Deno.remove(journal).catch(() => {});
  }
  return found;
}

/**
 * The user's newest conversation recorded in `where` (never a helper session), or undefined
 * when it has none.
 */
export async function latestSession(
  where: string | SessionPlace,
): Promise<SessionSummary | undefined> {
  return (await listSessions(where, 1, "conversations"))[0];
}

/**
 * Finds the trajectory for `idOrFile` (a session id, or a trajectory file's path) and checks it
 * can be resumed in `where`: the same workspace path, on the host for a host session, in a
 * container for a container's (named by the user, a session of another image may go on in this
 * one). Throws a ResumeError saying what is wrong otherwise.
 */
export async function loadResumable(
  idOrFile: string,
  where: string | SessionPlace,
): Promise<{ path: string; trajectory: Trajectory }> {
  const place = typeof where === "string" ? { workspace: where } : where;
  const workspace = place.workspace;
  const path = await locate(idOrFile);
  let trajectory: Trajectory;
  try {
    trajectory = await readTrajectory(path);
  } catch (e) {
    throw new ResumeError(`cannot resume ${path}: ${(e as Error).message}`);
  }
  if (trajectory.format_version === undefined) {
    throw new ResumeError(
      `cannot resume ${path}: it was written by an older Deft (or by Trae Agent) without a ` +
        `format_version, so its conversation cannot be rebuilt. Start a new run instead.`,
    );
  }
  if (trajectory.format_version > TRAJECTORY_FORMAT_VERSION) {
    throw new ResumeError(
      `cannot resume ${path}: it has format_version ${trajectory.format_version}, newer than ` +
        `this Deft understands (${TRAJECTORY_FORMAT_VERSION}). Update Deft.`,
    );
  }
  try {
    checkTrajectory(trajectory, path, "resume");
  } catch (e) {
    throw new ResumeError(`cannot resume: ${(e as Error).message}. Start a new run instead.`);
  }
  if (trajectory.working_dir !== workspace) {
    throw new ResumeError(
      `cannot resume ${path}: it was recorded in ${trajectory.working_dir ?? "an unknown folder"}` +
        `, not in this workspace (${workspace}). Run from that folder or pass -w with it.`,
    );
  }
  if (trajectory.container && !place.container) {
    throw new ResumeError(
      `cannot resume ${path}: its tools ran in a container (${
        placeText({ workspace, container: trajectory.container })
      }), and this run's tools would run on the host. Give the container flags again ` +
        `(--docker-image ${trajectory.container.image ?? "IMAGE"} -w ${workspace}).`,
    );
  }
  if (!trajectory.container && place.container) {
    throw new ResumeError(
      `cannot resume ${path}: it was recorded on the host, in the host's ${workspace}, and ` +
        `this run's tools run in a container, where ${workspace} holds other files. Resume it ` +
        `without the container flags.`,
    );
  }
  return { path, trajectory };
}

/**
 * The conversation a trajectory recorded: each model call's new input messages and its answer,
 * then the results of the last step's tool calls (a call without a recorded result gets an error
 * saying it was interrupted, so the conversation stays well-formed for every provider).
 */
export function rebuildConversation(trajectory: Trajectory): LLMMessage[] {
  const compacted = currentCompaction(trajectory);
  if (compacted) return [...compacted];
  const messages: LLMMessage[] = [];
  const kept = conversationRanges(trajectory).flatMap(([from, to]) =>
    trajectory.llm_interactions.slice(from, to)
  );
  for (const interaction of kept) {
    messages.push(...interaction.input_messages);
    const { content, tool_calls } = interaction.response;
    messages.push({ role: "assistant", content, tool_calls });
  }
  const last = messages.at(-1);
  if (last?.role !== "assistant" || !last.tool_calls?.length) return messages;
  const ids = new Set(last.tool_calls.map((c) => c.call_id));
  const step = trajectory.agent_steps.findLast((s) => s.tool_calls.some((c) => ids.has(c.call_id)));
  for (const call of last.tool_calls) {
    const result = step?.tool_results.find((r) => r.call_id === call.call_id);
    if (!result) {
      messages.push({
        role: "tool",
        call_id: call.call_id,
        name: call.name,
        content: "Error: the run stopped before this call finished; it may not have run.",
        is_error: true,
      });
      continue;
    }
    messages.push(toolMessage({ ...result, output: result.result }));
  }
  return messages;
}

/**
 * The conversation /compact left, when it is the file's last word: no model call and no rewind
 * since (the turn after a /compact records a new file that goes on from this one).
 */
function currentCompaction(trajectory: Trajectory): LLMMessage[] | undefined {
  const last = trajectory.compactions?.at(-1);
  if (!last) return undefined;
  const now = last.at_interactions === trajectory.llm_interactions.length &&
    last.at_rewinds === (trajectory.rewinds?.length ?? 0);
  return now ? last.messages : undefined;
}

/**
 * The model calls that make up the conversation now, as ranges of `llm_interactions`: all of them,
 * or after a rewind (`rewinds`), the ranges it kept and the calls made since.
 */
export function conversationRanges(trajectory: Trajectory): InteractionRanges {
  const total = trajectory.llm_interactions.length;
  const last = trajectory.rewinds?.at(-1);
  if (!last) return total > 0 ? [[0, total]] : [];
  const ranges = last.ranges.map(([a, b]): [number, number] => [a, b]);
  if (total > last.at_interactions) ranges.push([last.at_interactions, total]);
  return ranges;
}

function summarize(path: string, data: Trajectory): SessionSummary {
  return {
    id: data.session_id ?? basename(path, ".json"),
    path,
    started: data.start_time,
    task: data.task,
    steps: data.agent_steps.length,
    outcome: outcome(data),
    working_dir: data.working_dir,
    ...(Array.isArray(data.checkpoints) && { checkpoints: data.checkpoints.length }),
    ...(isCompacted(data) && { compacted: true as const }),
    ...lastReply(data),
    ...(data.helper_of && { helper_of: data.helper_of }),
  };
}

// A listing checks no more than that compactions are there: a resume checks their messages.
function isCompacted(data: Trajectory): boolean {
  const last = Array.isArray(data.compactions) ? data.compactions.at(-1) : undefined;
  return typeof last === "object" && last !== null &&
    last.at_interactions === data.llm_interactions.length &&
    last.at_rewinds === (Array.isArray(data.rewinds) ? data.rewinds.length : 0);
}

// The answer, else the words of the last model reply that had any (checked: listing only
// checks that interactions are an array).
function lastReply(data: Trajectory): { last_reply?: string } {
  if (data.final_result?.trim()) return { last_reply: data.final_result };
  for (const interaction of [...data.llm_interactions].reverse()) {
    const content = (interaction as { response?: { content?: unknown } })?.response?.content;
    if (typeof content === "string" && content.trim() !== "") return { last_reply: content };
  }
  return {};
}

// A run stopped by Ctrl-C or a signal records a last "interrupted" step: it did not fail.
function outcome(data: Trajectory): SessionSummary["outcome"] {
  if (data.success) return "completed";
  if (data.agent_steps.at(-1)?.state === "interrupted") return "interrupted";
  return data.end_time === null ? "unfinished" : "failed";
}

async function trajectoryFiles(): Promise<string[]> {
  const dir = trajectoriesDir();
  const files: { path: string; mtime: number }[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.endsWith(".json")) continue;
      const path = `${dir}/${entry.name}`;
      const info = await Deno.stat(path).catch(() => undefined);
      if (info) files.push({ path, mtime: info.mtime?.getTime() ?? 0 });
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  files.sort((a, b) => b.mtime - a.mtime || b.path.localeCompare(a.path));
  return files.slice(0, SCANNED_FILES).map((f) => f.path);
}

/** The trajectory file of a session id (or the file itself); throws ResumeError when none. */
export function locateSession(idOrFile: string): Promise<string> {
  return locate(idOrFile);
}

async function locate(idOrFile: string): Promise<string> {
  if (idOrFile.includes("/") || idOrFile.endsWith(".json")) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(idOrFile);
    } catch {
      throw new ResumeError(`cannot resume ${idOrFile}: no such trajectory file.`);
    }
    // A FIFO or device named like a trajectory (a repository can ship one) would block the
    // read or never end: only a regular file is opened.
    if (!info.isFile) {
      throw new ResumeError(
        `${idOrFile} is not a regular file (a folder, FIFO, socket or device): refused, it is ` +
          "not read. Name a trajectory file, or a session id from deft sessions.",
      );
    }
    return idOrFile;
  }
  if (!/^[\w.-]+$/.test(idOrFile)) {
    throw new ResumeError(`'${idOrFile}' is not a session id; see deft sessions for the ids.`);
  }
  const direct = `${trajectoriesDir()}/trajectory_${idOrFile}.json`;
  if (await Deno.stat(direct).then(() => true, () => false)) return direct;
  for (const path of await trajectoryFiles()) {
    const data = await readTrajectory(path).catch(() => undefined);
    if (data?.session_id === idOrFile) return path;
  }
  throw new ResumeError(
    `no session '${idOrFile}' in ${trajectoriesDir()}; deft sessions lists this workspace's ` +
      `sessions.`,
  );
}
