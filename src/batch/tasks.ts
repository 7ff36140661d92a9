/**
 * The task file of `deft batch`: JSON Lines, one task per line. Every line is checked before any
 * task starts, and every bad line is reported with its line number, so a typo on line 900 does not
 * surface hours into a run.
 *
 * Two kinds of line: Deft's own (`id`, `repo`, `task`, …; an unknown field is a typo and an error)
 * and SWE-bench dataset lines as they are (`instance_id`, `repo`, `base_commit`,
 * `problem_statement`, …; fields Deft does not use are tolerated). A line with an image (its own
 * `image`, or `--image-template` applied to its instance id) runs in a container of it, on the
 * repository inside; its `repo` and commit are recorded, not cloned.
 *
 * Which image a line runs in: its own `image` (or `dockerfile`), else `--image-template` applied
 * to a SWE-bench line's instance id, else the batch's default image (`--docker-image`, or the one
 * `--dockerfile-path`/`--docker-image-file` made; see `applyDefaultImage`), else none: a checkout.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { UsageError } from "../errors.ts";
import { checkContainerWord } from "../policy/process.ts";
import { OwnFileError, readOwnText } from "../policy/own_file.ts";

/** One task of a batch, as validated. */
export interface BatchTask {
  /** Position among the tasks (0-based); a Slurm array index or `--index` names a task by it. */
  index: number;
  /** Unique name; also the folder under the output directory. */
  id: string;
  /**
   * A local path (absolute after validation) or a URL git can clone; with an image, the
   * repository as the line names it (recorded, not cloned).
   */
  repo?: string;
  /** The commit to check out; with an image, recorded only (SWE-bench's `base_commit`). */
  commit?: string;
  /** The image the task runs in; its repository is the one inside (see `workdir`). */
  image?: string;
  /**
   * A Dockerfile (its real path after validation, inside the task file's folder; the line gives
   * it relative to that folder) built into the image the task runs in, its folder the build
   * context; the image goes with the task.
   */
  dockerfile?: string;
  /** The workspace inside the image, absolute; unset: the image's WORKDIR. */
  workdir?: string;
  /** The SWE-bench instance id the line came with (it is also the task's `id`). */
  instance_id?: string;
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

const KEYS = [
  "id",
  "repo",
  "commit",
  "task",
  "test",
  "max_steps",
  "timeout",
  "replay",
  "image",
  "dockerfile",
  "workdir",
];

/** `--image-template swebench`: SWE-bench's own images on Docker Hub (x86_64). */
export const SWE_BENCH_TEMPLATE = "swebench/sweb.eval.x86_64.{swebench_id}:latest";
const PLACEHOLDERS = ["id", "id_lower", "swebench_id"];

/** What reading a task file may be told. */
export interface TaskFileOptions {
  /** Turns a SWE-bench line's instance id into its image (see `imageFor`). */
  imageTemplate?: string;
  /**
   * The batch names a default image (`--docker-image`, `--dockerfile-path` or
   * `--docker-image-file`): every line runs in a container, so none needs a `repo`; the lines
   * without an image of their own get it from `applyDefaultImage`.
   */
  defaultImage?: boolean;
}

// Ids become folder names: no separators, no dot-only names, nothing an option parser would take.
const ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
// A commit-ish that git cannot read as an option.
const COMMIT_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._\/^~@{}-]{0,199}$/;

/** Largest task file read: a few thousand tasks with their problem statements. */
export const MAX_TASK_FILE_BYTES = 64 * 1024 * 1024;

/** Reads and validates a task file; throws a UsageError listing every bad line. */
export async function readTasks(
  path: string,
  options: TaskFileOptions = {},
): Promise<BatchTask[]> {
  let text: string;
  try {
    text = await readOwnText(path, {
      limit: MAX_TASK_FILE_BYTES,
      what: "a task file",
      hint: "Give a JSON Lines file of tasks (see docs/batch.md).",
    });
  } catch (e) {
    if (e instanceof OwnFileError) throw new UsageError(e.message);
    throw new UsageError(`cannot read the task file ${path}: ${(e as Error).message}`);
  }
  return parseTasks(text, path, options);
}

/**
 * Checks an `--image-template`: `swebench` (SWE-bench's images), or a name holding at least one
 * of `{id}` (the instance id as written), `{id_lower}` (lower-cased, as SWE-bench's locally
 * built images are named) and `{swebench_id}` (lower-cased, every `__` as `_1776_`, as
 * SWE-bench's images on Docker Hub are named). Returns the template to use.
 */
export function checkImageTemplate(template: string): string {
  const full = template === "swebench" ? SWE_BENCH_TEMPLATE : template;
  const used = [...full.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]);
  const unknown = used.filter((p) => !PLACEHOLDERS.includes(p));
  if (unknown.length || used.length === 0) {
    throw new UsageError(
      `--image-template ${JSON.stringify(template)} ` +
        (unknown.length
          ? `has unknown placeholder(s) {${unknown.join("}, {")}}`
          : "names no instance") +
        ": use {id}, {id_lower} or {swebench_id} (SWE-bench's Docker Hub naming), or " +
        `\`swebench\` for ${SWE_BENCH_TEMPLATE}.`,
    );
  }
  try {
    checkContainerWord("--image-template", imageFor(full, "a__b-1"));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return full;
}

/** The image `template` names for `instanceId` (see `checkImageTemplate`). */
export function imageFor(template: string, instanceId: string): string {
  const values: Record<string, string> = {
    id: instanceId,
    id_lower: instanceId.toLowerCase(),
    swebench_id: instanceId.toLowerCase().replaceAll("__", "_1776_"),
  };
  return template.replace(/\{([a-z_]+)\}/g, (_, p: string) => values[p]);
}

/** Validates task-file text; relative paths are taken from the folder of `path`. */
export function parseTasks(
  text: string,
  path: string,
  options: TaskFileOptions = {},
): BatchTask[] {
  const template = options.imageTemplate === undefined
    ? undefined
    : checkImageTemplate(options.imageTemplate);
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
    // A SWE-bench line: the dataset's fields as they are, any others tolerated.
    const sweBench = "instance_id" in record;
    if (!sweBench) {
      const unknown = Object.keys(record).filter((k) => !KEYS.includes(k));
      if (unknown.length) {
        problems.push(`unknown field(s) ${unknown.join(", ")} (known: ${KEYS.join(", ")})`);
      }
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
    if (sweBench && record.id !== undefined) {
      problems.push(`"id" and "instance_id" cannot go together: the instance id names the task`);
    }
    const idKey = sweBench ? "instance_id" : "id";
    const id = str(idKey, true);
    if (id !== undefined && !ID_PATTERN.test(id)) {
      problems.push(
        `"${idKey}" ${JSON.stringify(id)} must be 1-128 letters, digits, ".", "_" or "-", ` +
          `not starting with "." or "-" (it names the task's folder)`,
      );
    } else if (id !== undefined && seen.has(id)) {
      problems.push(`"id" ${JSON.stringify(id)} is used again (first on line ${seen.get(id)})`);
    } else if (id !== undefined) seen.set(id, i + 1);
    let image = str("image", false);
    const dockerfile = str("dockerfile", false);
    if (dockerfile !== undefined && record.image !== undefined) {
      problems.push(`"image" and "dockerfile" cannot go together: name one image or one build`);
    }
    let dockerfilePath: string | undefined;
    if (dockerfile !== undefined && /[\0\n\r]/.test(dockerfile)) {
      problems.push(`"dockerfile" ${JSON.stringify(dockerfile)} is not a file name`);
    } else if (dockerfile !== undefined) {
      const checked = lineDockerfile(base, dockerfile);
      if ("problem" in checked) problems.push(checked.problem);
      else dockerfilePath = checked.path;
    }
    if (image === undefined && dockerfile === undefined && sweBench && id !== undefined) {
      if (template === undefined && options.defaultImage) {
        // The batch's default image, filled in by applyDefaultImage.
      } else if (template === undefined) {
        problems.push(
          `no image for instance ${JSON.stringify(id)}: give --image-template (\`swebench\` for ` +
            `SWE-bench's own images) or an "image" field`,
        );
      } else image = imageFor(template, id);
    }
    if (image !== undefined) {
      try {
        checkContainerWord(`"image"`, image);
      } catch (e) {
        problems.push((e as Error).message);
        image = undefined;
      }
    }
    const contained = image !== undefined || record.image !== undefined ||
      record.dockerfile !== undefined || sweBench || options.defaultImage === true;
    const repo = str("repo", false);
    if (!contained && record.repo === undefined) {
      problems.push(
        `"repo" is missing (the repository to clone; or name an "image" whose WORKDIR holds it)`,
      );
    }
    const commitKey = sweBench && record.commit === undefined ? "base_commit" : "commit";
    const commit = str(commitKey, false);
    if (commit !== undefined && !COMMIT_PATTERN.test(commit)) {
      problems.push(`"${commitKey}" ${JSON.stringify(commit)} is not a commit, branch or tag name`);
    }
    const workdir = str("workdir", false);
    if (workdir !== undefined && (!workdir.startsWith("/") || /[\0\n\r]/.test(workdir))) {
      problems.push(
        `"workdir" ${JSON.stringify(workdir)} must be an absolute folder inside the image`,
      );
    }
    if (workdir !== undefined && !contained) {
      problems.push(`"workdir" names a folder inside an image: give "image" too`);
    }
    const task = str("task", false) ??
      (sweBench && record.task === undefined ? str("problem_statement", false) : undefined);
    const test = str("test", false);
    const replay = str("replay", false);
    if (
      task === undefined && replay === undefined && record.task === undefined &&
      record.problem_statement === undefined
    ) {
      problems.push(
        sweBench
          ? `"problem_statement" is missing (optional only with "replay")`
          : `"task" is missing (the problem statement; optional only with "replay")`,
      );
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
      ...(repo === undefined ? {} : {
        repo: image !== undefined || options.defaultImage || isRemote(repo)
          ? repo
          : resolve(base, repo),
      }),
      ...(commit !== undefined ? { commit } : {}),
      ...(image !== undefined ? { image } : {}),
      ...(dockerfilePath !== undefined ? { dockerfile: dockerfilePath } : {}),
      ...(workdir !== undefined ? { workdir: workdir.replace(/(.)\/+$/, "$1") } : {}),
      ...(sweBench ? { instance_id: id! } : {}),
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

/**
 * A line's `dockerfile`, checked: its real path (every symbolic link resolved) must be a file
 * inside the real folder of the task file. Its folder becomes the build context, and whatever the
 * context holds can be copied into the image the model works in, so a line must not make a folder
 * elsewhere (`../..`, an absolute path, a link leading out) the context. A Dockerfile the user
 * names on the command line (`--dockerfile-path`) is not a line's and is not checked here.
 * Returns the real path (what is built) or the problem.
 */
export function lineDockerfile(
  base: string,
  given: string,
): { path: string } | { problem: string } {
  const named = resolve(base, given);
  const field = `"dockerfile" ${JSON.stringify(given)}`;
  const fix = `move the Dockerfile, with the files its build needs, into a folder under ${base}, ` +
    "or build that image yourself and name it on the command line (--dockerfile-path or " +
    "--docker-image)";
  let root: string;
  try {
    root = Deno.realPathSync(base);
  } catch (e) {
    return { problem: `${field}: the task file's folder ${base} cannot be read (${errorText(e)})` };
  }
  const outside = (path: string, folder: string) =>
    path !== folder && !path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
  if (outside(named, base) && outside(named, root)) {
    return {
      problem: `${field} names ${named}, outside the task file's folder ${base}: refused, as ` +
        `its folder would be the build context and its files would reach the model; ${fix}`,
    };
  }
  let real: string;
  try {
    real = Deno.realPathSync(named);
  } catch (e) {
    return {
      problem: e instanceof Deno.errors.NotFound
        ? `${field}: there is no file ${named} (a Dockerfile, relative to the task file's folder)`
        : `${field}: ${named} cannot be read (${errorText(e)})`,
    };
  }
  if (outside(real, root)) {
    return {
      problem: `${field} leads through a symbolic link to ${real}, outside the task file's ` +
        `folder ${root}: refused, as its folder would be the build context and its files would ` +
        `reach the model; ${fix}`,
    };
  }
  let isFile = false;
  try {
    isFile = Deno.statSync(real).isFile;
  } catch {
    // Reported below.
  }
  if (!isFile) return { problem: `${field}: ${named} is not a file (name the Dockerfile)` };
  return { path: real };
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The tasks with `image` as the image of every line that names none (neither `image` nor
 * `dockerfile`, nor one from `--image-template`).
 */
export function applyDefaultImage(tasks: BatchTask[], image: string): BatchTask[] {
  return tasks.map((t) =>
    t.image !== undefined || t.dockerfile !== undefined ? t : { ...t, image }
  );
}

/** True for a repository git reaches over the network (`scheme://…` or scp-like `host:path`). */
export function isRemote(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/:]+@[^/:]+:/.test(repo);
}
