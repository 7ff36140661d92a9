/**
 * The task file of `deft batch`: JSON Lines, one task per line. Every line is checked before any
 * task starts, and every bad line is reported with its line number, so a typo on line 900 does not
 * surface hours into a run.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { UsageError } from "../errors.ts";

/** One task of a batch, as validated. */
export interface BatchTask {
  /** Position among the tasks (0-based); a Slurm array index or `--index` names a task by it. */
  index: number;
  /** Unique name; also the folder under the output directory. */
  id: string;
  /** A local path (absolute after validation) or a URL git can clone. */
  repo: string;
  commit?: string;
  /** The problem statement; absent only when `replay` gives the recording's own task. */
  task?: string;
  /** A shell command run in the checkout afterwards; its exit code says whether the patch works. */
  test?: string;
  max_steps?: number;
  /** Seconds for the whole task (checkout, agent, test). */
  timeout?: number;
  /** A recorded trajectory whose model responses are replayed (no model, no API key). */
  replay?: string;
}

const KEYS = ["id", "repo", "commit", "task", "test", "max_steps", "timeout", "replay"];

// Ids become folder names: no separators, no dot-only names, nothing an option parser would take.
const ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
// A commit-ish that git cannot read as an option.
const COMMIT_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._\/^~@{}-]{0,199}$/;

/** Reads and validates a task file; throws a UsageError listing every bad line. */
export async function readTasks(path: string): Promise<BatchTask[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new UsageError(`cannot read the task file ${path}: ${(e as Error).message}`);
  }
  return parseTasks(text, path);
}

/** Validates task-file text; relative paths are taken from the folder of `path`. */
export function parseTasks(text: string, path: string): BatchTask[] {
  const base = dirname(resolve(path));
  const tasks: BatchTask[] = [];
  const errors: string[] = [];
  const seen = new Map<string, number>();
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const where = `${path}:${i + 1}`;
    const problems: string[] = [];
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      errors.push(`${where}: not valid JSON (${(e as Error).message})`);
      return;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      errors.push(
        `${where}: expected a JSON object such as {"id": "t1", "repo": ..., "task": ...}`,
      );
      return;
    }
    const record = value as Record<string, unknown>;
    const unknown = Object.keys(record).filter((k) => !KEYS.includes(k));
    if (unknown.length) {
      problems.push(`unknown field(s) ${unknown.join(", ")} (known: ${KEYS.join(", ")})`);
    }
    const str = (key: string, required: boolean): string | undefined => {
      const v = record[key];
      if (v === undefined || v === null) {
        if (required) problems.push(`"${key}" is missing`);
        return undefined;
      }
      if (typeof v !== "string" || v.trim() === "") {
        problems.push(`"${key}" must be a non-empty string`);
        return undefined;
      }
      return v;
    };
    const num = (key: string, integer: boolean): number | undefined => {
      const v = record[key];
      if (v === undefined || v === null) return undefined;
      if (
        typeof v !== "number" || !(v > 0) || !Number.isFinite(v) ||
        (integer && !Number.isInteger(v))
      ) {
        problems.push(`"${key}" must be a positive ${integer ? "integer" : "number"}`);
        return undefined;
      }
      return v;
    };
    const id = str("id", true);
    if (id !== undefined && !ID_PATTERN.test(id)) {
      problems.push(
        `"id" ${JSON.stringify(id)} must be 1-128 letters, digits, ".", "_" or "-", ` +
          `not starting with "." or "-" (it names the task's folder)`,
      );
    } else if (id !== undefined && seen.has(id)) {
      problems.push(`"id" ${JSON.stringify(id)} is used again (first on line ${seen.get(id)})`);
    } else if (id !== undefined) seen.set(id, i + 1);
    const repo = str("repo", true);
    const commit = str("commit", false);
    if (commit !== undefined && !COMMIT_PATTERN.test(commit)) {
      problems.push(`"commit" ${JSON.stringify(commit)} is not a commit, branch or tag name`);
    }
    const task = str("task", false);
    const test = str("test", false);
    const replay = str("replay", false);
    if (task === undefined && replay === undefined && record.task === undefined) {
      problems.push(`"task" is missing (the problem statement; optional only with "replay")`);
    }
    const maxSteps = num("max_steps", true);
    const timeout = num("timeout", false);
    if (problems.length) {
      errors.push(`${where}: ${problems.join("; ")}`);
      return;
    }
    tasks.push({
      index: tasks.length,
      id: id!,
      repo: isRemote(repo!) ? repo! : resolve(base, repo!),
      ...(commit !== undefined ? { commit } : {}),
      ...(task !== undefined ? { task } : {}),
      ...(test !== undefined ? { test } : {}),
      ...(maxSteps !== undefined ? { max_steps: maxSteps } : {}),
      ...(timeout !== undefined ? { timeout } : {}),
      ...(replay !== undefined
        ? { replay: isAbsolute(replay) ? replay : resolve(base, replay) }
        : {}),
    });
  });
  if (errors.length) {
    const shown = errors.slice(0, 50);
    const more = errors.length > shown.length
      ? `\n  … and ${errors.length - shown.length} more`
      : "";
    throw new UsageError(
      `the task file has ${errors.length} bad line(s); nothing was started:\n  ` +
        shown.join("\n  ") + more,
    );
  }
  if (tasks.length === 0) {
    throw new UsageError(`the task file ${path} holds no tasks (one JSON object per line).`);
  }
  return tasks;
}

/** True for a repository git reaches over the network (`scheme://…` or scp-like `host:path`). */
export function isRemote(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/:]+@[^/:]+:/.test(repo);
}
