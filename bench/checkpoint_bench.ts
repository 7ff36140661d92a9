/**
 * Checkpoint benchmark (issue 51, "checkpoints cost what git costs"): in a generated repository of
 * 1k, 10k and 50k committed files, times one turn's checkpoint with one file changed against
 * `git add -A && git write-tree` on a warm index of the same tree (the command git itself needs),
 * and the session's first checkpoint (its store made, HEAD's tree standing for the new index)
 * against that command on a cold index (none). Each pair is measured interleaved (git, Deft,
 * Deft, git, …: the load falls on both alike), Deft's without a sandbox and in the
 * `workspace-write` one; each printed as a ratio of medians with the target (≤ 1.5×) and the
 * machine's load.
 *
 * What is timed is what the user waits for. A turn: `takeCheckpoint` alone (the store's place is
 * the session's, open since its start). A first checkpoint: making the store's place
 * (`hostCheckpointPlace`) and `takeCheckpoint`, from nothing (`first`). Sandboxed, a session
 * starts the store's sandboxed git when it opens (`startCheckpointsEarly`), while it loads its
 * tools and hooks and records its baseline, well before its first checkpoint: `first,
 * sandboxed, started early` times the same two steps after that start has settled (its own
 * time is printed beside it); `first, sandboxed` is the one where nothing overlapped it.
 *
 * Run alone with `deno run -A bench/checkpoint_bench.ts [--runs N] [--sizes 1000,10000]`.
 */
import { join } from "node:path";
import {
  checkpointStoreDir,
  hostCheckpointPlace,
  removeCheckpointStore,
  startCheckpointsEarly,
  takeCheckpoint,
} from "../src/agent/checkpoints.ts";
import { gitSandbox } from "../src/policy/git.ts";
import { sandboxCommand } from "../src/policy/sandbox.ts";
import {
  checkpointTrajectory,
  commitFiles,
  manyFiles,
  stateDirOfItsOwn,
} from "../tests/helpers/checkpoints.ts";
import { median, ms } from "./timing.ts";

const TARGET = 1.5;

/** Runs the benchmark and prints one line per size and kind. */
export default async function checkpointBench(args: string[]): Promise<void> {
  const runs = numberFlag(args, "--runs", 7);
  const sizesAt = args.indexOf("--sizes");
  const sizes = sizesAt === -1 ? [1_000, 10_000, 50_000] : args[sizesAt + 1].split(",").map(Number);
  await using _state = await stateDirOfItsOwn("deft-ckpt-bench-state-");
  for (const size of sizes) {
    for (const line of await checkpointFigures(size, runs)) console.log(line.text);
  }
}

/** One figure: what was timed, the medians, their ratio, and the line the bench prints. */
export interface CheckpointFigure {
  what: string;
  deft: number;
  git: number;
  ratio: number;
  text: string;
}

/**
 * The figures of a repository of `size` files: a turn and a first checkpoint, without a sandbox
 * and in the default one (`sandboxes`), each the ratio of medians of `runs` interleaved pairs
 * (first checkpoints: fewer at 50k). Deft's state dir must be one of the caller's own.
 */
export async function checkpointFigures(
  size: number,
  runs: number,
  sandboxes: readonly ("none" | "workspace-write")[] = ["none", "workspace-write"],
): Promise<CheckpointFigure[]> {
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-ckpt-bench-" }));
  try {
    await commitFiles(repo, manyFiles(size));
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
    const coldRuns = Math.max(1, size >= 50_000 ? Math.min(runs, 3) : runs);
    const figures: CheckpointFigure[] = [];
    for (const sandbox of sandboxes) {
      const warmGit: number[] = [];
      const warmDeft: number[] = [];
      const coldGit: number[] = [];
      const coldDeft: number[] = [];
      const earlyDeft: number[] = [];
      const earlyStarts: number[] = [];
      const bwrapStarts: number[] = [];
      const loads: number[] = [];
      for (let run = 0; run < coldRuns; run++) {
        const id = `bench_${size}_${sandbox}_${run}_${crypto.randomUUID().slice(0, 6)}`;
        const cold = async () => {
          await Deno.remove(gitIndex).catch(() => {});
          coldGit.push(await addAndWrite());
        };
        // Alternate which goes first, so neither always finds the page cache the other left.
        if (run % 2 === 0) await cold();
        const start = performance.now();
        const at = await hostCheckpointPlace(repo, id, gitSandbox(repo, { sandbox }));
        const data = checkpointTrajectory(id);
        await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
        coldDeft.push(performance.now() - start);
        if (sandbox !== "none") {
          // As a session does: the store and its sandboxed git started when it opens; the
          // first checkpoint comes after its start-up (settled here).
          const early = startCheckpointsEarly(repo, gitSandbox(repo, { sandbox }))!;
          const t0 = performance.now();
          await early.started;
          earlyStarts.push(performance.now() - t0);
          const t = performance.now();
          const first = await hostCheckpointPlace(
            repo,
            early.sessionId,
            gitSandbox(repo, { sandbox }),
          );
          const firstData = checkpointTrajectory(early.sessionId);
          await takeCheckpoint(first, firstData, { turn: 0, kind: "start", label: "start" });
          earlyDeft.push(performance.now() - t);
          await removeCheckpointStore(early.sessionId);
        }
        if (run % 2 === 1) await cold();
        // A sandboxed first checkpoint starts the store's sandbox: its floor is git's own time
        // plus one bare start of that sandbox (`bwrap … true` with the same view).
        if (sandbox !== "none") bwrapStarts.push(await bwrapTrue(repo, at.store));
        loads.push(Deno.loadavg()[0]);
        if (run === coldRuns - 1) {
          await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "warm-up" });
          for (let turn = 0; turn < runs; turn++) {
            const gitTurn = async () => {
              await edit();
              warmGit.push(await addAndWrite());
            };
            if (turn % 2 === 0) await gitTurn();
            await edit();
            const t = performance.now();
            await takeCheckpoint(at, data, { turn: turn + 2, kind: "turn", label: "turn" });
            warmDeft.push(performance.now() - t);
            if (turn % 2 === 1) await gitTurn();
            loads.push(Deno.loadavg()[0]);
          }
        }
        await removeCheckpointStore(id);
        await Deno.remove(checkpointStoreDir(id), { recursive: true }).catch(() => {});
      }
      const where = sandbox === "none" ? "" : ", sandboxed";
      const load = `load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`;
      for (
        const [what, deft, base, n] of [
          [`turn${where}`, warmDeft, warmGit, runs],
          [`first${where}`, coldDeft, coldGit, coldRuns],
          ...(sandbox === "none"
            ? []
            : [[`first${where}, started early`, earlyDeft, coldGit, coldRuns] as const]),
        ] as const
      ) {
        const [d, b] = [median(deft), median(base)];
        const ratio = d / b;
        const floor = what === "first, sandboxed" ? median(bwrapStarts) : undefined;
        const againstFloor = floor === undefined
          ? what.endsWith("started early")
            ? `; the early start itself ${ms(median(earlyStarts))}, at the session's opening`
            : ""
          : `; against git + a bare sandbox start (${ms(floor)}) ${(d / (b + floor)).toFixed(2)}`;
        figures.push({
          what,
          deft: d,
          git: b,
          ratio,
          text:
            `checkpoint: ${size} files, ${what}: ${ms(d)}; git add -A && write-tree on a ${
              what.startsWith("turn") ? "warm" : "cold"
            } index ${ms(b)}; ratio ${ratio.toFixed(2)} (target <= ${TARGET}; medians of ${n}, ` +
            `${load})${ratio <= TARGET ? "" : " MISSED"}${againstFloor}`,
        });
      }
    }
    return figures;
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
}

/** One start of the sandbox a checkpoint store's git runs in, running `true`; its wall time. */
async function bwrapTrue(repo: string, store: string): Promise<number> {
  const { program, args } = sandboxCommand(["true"], {
    mode: "workspace-write",
    workspace: repo,
    cwd: repo,
    writablePaths: [store],
  });
  const start = performance.now();
  const out = await new Deno.Command(program, { args, stdout: "null", stderr: "null" }).output();
  if (!out.success) throw new Error("bwrap true failed");
  return performance.now() - start;
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
