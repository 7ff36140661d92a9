/**
 * The set-up that checkpoint tests and the checkpoint benchmark share: a committed repository of
 * given files (old enough that git trusts their times), Deft's state dir in a folder of its own
 * (where checkpoint stores go), an empty session trajectory, and a log of every git process
 * started (a shim first on PATH).
 */
import { dirname, join } from "node:path";
import type { Trajectory } from "../../src/trajectory/recorder.ts";
import { removeCheckpointStore } from "../../src/agent/checkpoints.ts";
import { git } from "./repo.ts";
import { tempDir } from "./temp.ts";

/** An empty trajectory of session `id`, as a session has before its first checkpoint. */
export function checkpointTrajectory(id: string): Trajectory {
  return {
    task: "t",
    start_time: new Date().toISOString(),
    end_time: null,
    provider: "none",
    model: "none",
    max_steps: 1,
    llm_interactions: [],
    agent_steps: [],
    success: false,
    final_result: null,
    execution_time: 0,
    total_usage: {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      reasoning_tokens: 0,
    },
    session_id: id,
  };
}

/**
 * `count` small files (`d<n>/f<m>.txt`, 100 to a folder), as `commitFiles` takes them: the tree
 * of the checkpoint benchmark.
 */
export function manyFiles(count: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`d${Math.floor(i / 100)}/f${i % 100}.txt`] = `file ${i}\n`;
  return files;
}

/**
 * Writes `files` (path from `dir` → text) into `dir`, makes it a repository and commits them.
 * Every file and folder is dated an hour back, as in a repository worked in before: files
 * written in the same second as an index are "racy" to git, which reads them all again at each
 * look until a second has passed — a cost no user's repository pays.
 */
export async function commitFiles(dir: string, files: Record<string, string>): Promise<void> {
  const folders = new Set<string>();
  for (const [path, text] of Object.entries(files)) {
    const folder = dirname(join(dir, path));
    if (!folders.has(folder)) {
      await Deno.mkdir(folder, { recursive: true });
      folders.add(folder);
    }
    await Deno.writeTextFile(join(dir, path), text);
  }
  const past = new Date(Date.now() - 3600_000);
  for (const path of Object.keys(files)) await Deno.utime(join(dir, path), past, past);
  for (const folder of folders) await Deno.utime(folder, past, past);
  await git(dir, "init", "-q");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
}

/**
 * Points Deft's state dir (and so its checkpoint stores) at a new temp folder until disposed,
 * then puts XDG_STATE_HOME back and removes the folder.
 */
export async function stateDirOfItsOwn(prefix = "deft-ckpt-state-"): Promise<AsyncDisposable> {
  const state = await tempDir(prefix);
  const before = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", state.path);
  return {
    async [Symbol.asyncDispose]() {
      if (before === undefined) Deno.env.delete("XDG_STATE_HOME");
      else Deno.env.set("XDG_STATE_HOME", before);
      await state.remove();
    },
  };
}

/**
 * Runs `body` with a session id of its own and Deft's state dir in a folder of its own; the
 * session's store is removed after.
 */
export async function withCheckpointState(
  body: (id: string) => Promise<void>,
  prefix = "ckpt",
): Promise<void> {
  await using _state = await stateDirOfItsOwn(`deft-${prefix}-state-`);
  const id = `${prefix}_${crypto.randomUUID().slice(0, 8)}`;
  try {
    await body(id);
  } finally {
    await removeCheckpointStore(id).catch(() => {});
  }
}

/** The git processes started while a `gitLog` is in force (outside a sandbox). */
export interface GitLog extends AsyncDisposable {
  /** The command lines started since the last call (or since the log began), and a new start. */
  take(): Promise<string[]>;
}

/**
 * Puts a shim first on PATH that notes each git command line, then runs the real git, until
 * disposed. Git inside a sandbox does not see it: count with `sandbox: none`.
 */
export async function gitLog(): Promise<GitLog> {
  const shim = await tempDir("deft-git-shim-");
  const found = await new Deno.Command("sh", { args: ["-c", "command -v git"], stdout: "piped" })
    .output();
  const realGit = new TextDecoder().decode(found.stdout).trim();
  const log = `${shim.path}/calls`;
  await Deno.writeTextFile(log, "");
  await Deno.writeTextFile(
    `${shim.path}/git`,
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realGit}' "$@"\n`,
  );
  await Deno.chmod(`${shim.path}/git`, 0o755);
  const path = Deno.env.get("PATH") ?? "/usr/bin:/bin";
  Deno.env.set("PATH", `${shim.path}:${path}`);
  return {
    async take() {
      const all = (await Deno.readTextFile(log)).split("\n").filter(Boolean);
      await Deno.writeTextFile(log, "");
      return all;
    },
    async [Symbol.asyncDispose]() {
      Deno.env.set("PATH", path);
      await shim.remove();
    },
  };
}
