/**
 * Checkpoint benchmark (issue 51, "checkpoints cost what git costs"): in a generated repository of
 * 1k, 10k and 50k committed files, times one turn's checkpoint with one file changed against
 * `git add -A && git write-tree` on a warm index of the same tree (the command git itself needs),
 * and the session's first checkpoint (its store made, the index read from HEAD) against that
 * command on a cold index (none). Both measured in the same run, Deft's without a sandbox and in
 * the `workspace-write` one; each printed as a ratio with the target (≤ 1.5×).
 *
 * Run alone with `deno run -A bench/checkpoint_bench.ts [--runs N] [--sizes 1000,10000]`.
 */
import { join } from "node:path";
import {
  checkpointStoreDir,
  hostCheckpointPlace,
  removeCheckpointStore,
  takeCheckpoint,
} from "../src/agent/checkpoints.ts";
import { gitSandbox } from "../src/policy/git.ts";
import type { Trajectory } from "../src/trajectory/recorder.ts";
import { median, ms } from "./timing.ts";

const TARGET = 1.5;
const FILES_PER_FOLDER = 100;

/** Runs the benchmark and prints one line per size and kind. */
export default async function checkpointBench(args: string[]): Promise<void> {
  const runs = numberFlag(args, "--runs", 5);
  const sizesAt = args.indexOf("--sizes");
  const sizes = sizesAt === -1 ? [1_000, 10_000, 50_000] : args[sizesAt + 1].split(",").map(Number);
  const state = await Deno.makeTempDir({ prefix: "deft-ckpt-bench-state-" });
  const before = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", state);
  try {
    for (const size of sizes) await benchSize(size, runs);
  } finally {
    if (before === undefined) Deno.env.delete("XDG_STATE_HOME");
    else Deno.env.set("XDG_STATE_HOME", before);
    await Deno.remove(state, { recursive: true });
  }
}

async function benchSize(size: number, runs: number): Promise<void> {
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-ckpt-bench-" }));
  try {
    await makeRepo(repo, size);
    const target = join(repo, "d0", "f0.txt");
    let edits = 0;
    const edit = () => Deno.writeTextFile(target, `line ${++edits}\n`.repeat(20));
    // git's own index, kept warm by the baseline; Deft's stores are its own.
    const gitIndex = join(repo, ".git", "bench.index");
    const gitEnv = { GIT_INDEX_FILE: gitIndex };
    const addAndWrite = async () => {
      const start = performance.now();
      await git(repo, ["add", "-A"], gitEnv);
      await git(repo, ["write-tree"], gitEnv);
      return performance.now() - start;
    };
    await addAndWrite();
    const coldRuns = Math.max(1, Math.min(runs, size >= 50_000 ? 2 : 3));
    const rows: [string, number[], number[]][] = [];
    for (const sandbox of ["none", "workspace-write"] as const) {
      const warmGit: number[] = [];
      const warmDeft: number[] = [];
      const coldGit: number[] = [];
      const coldDeft: number[] = [];
      for (let run = 0; run < coldRuns; run++) {
        await Deno.remove(gitIndex).catch(() => {});
        coldGit.push(await addAndWrite());
        const id = `bench_${size}_${sandbox}_${run}`;
        const start = performance.now();
        const at = await hostCheckpointPlace(repo, id, gitSandbox(repo, { sandbox }));
        const data = trajectory(id);
        await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
        coldDeft.push(performance.now() - start);
        if (run === coldRuns - 1) {
          await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "warm-up" });
          for (let turn = 0; turn < runs; turn++) {
            await edit();
            warmGit.push(await addAndWrite());
            await edit();
            const t = performance.now();
            await takeCheckpoint(at, data, { turn: turn + 2, kind: "turn", label: "turn" });
            warmDeft.push(performance.now() - t);
          }
        }
        await removeCheckpointStore(id);
        await Deno.remove(checkpointStoreDir(id), { recursive: true }).catch(() => {});
      }
      const where = sandbox === "none" ? "" : ", sandboxed";
      rows.push([`turn${where}`, warmDeft, warmGit], [`first${where}`, coldDeft, coldGit]);
    }
    for (const [what, deft, base] of rows) {
      const [d, b] = [median(deft), median(base)];
      const ratio = d / b;
      console.log(
        `checkpoint: ${size} files, ${what}: ${ms(d)}; git add -A && write-tree on a ${
          what.startsWith("turn") ? "warm" : "cold"
        } index ${ms(b)}; ratio ${ratio.toFixed(2)} (target <= ${TARGET})${
          ratio <= TARGET ? "" : " MISSED"
        }`,
      );
    }
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
}

function trajectory(id: string): Trajectory {
  return {
    task: "bench",
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

/** `size` small committed files, FILES_PER_FOLDER to a folder. */
async function makeRepo(repo: string, size: number): Promise<void> {
  for (let i = 0; i < size; i++) {
    const folder = join(repo, `d${Math.floor(i / FILES_PER_FOLDER)}`);
    if (i % FILES_PER_FOLDER === 0) await Deno.mkdir(folder);
    await Deno.writeTextFile(join(folder, `f${i % FILES_PER_FOLDER}.txt`), `file ${i}\n`);
  }
  await git(repo, ["init", "-q"]);
  await git(repo, ["add", "-A"]);
  await git(repo, ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"]);
}

async function git(cwd: string, args: string[], env?: Record<string, string>): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, env, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

function numberFlag(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  const value = at === -1 ? NaN : Number(args[at + 1]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

if (import.meta.main) await checkpointBench(Deno.args);
