/**
 * Slurm as the scheduler of a batch: one job array per submission, each array task running
 * `deft batch TASKS --out DIR --index $SLURM_ARRAY_TASK_ID` with the same Deft file, so nodes need
 * nothing installed but Deno (or the compiled binary) on a shared filesystem. The scheduler's view
 * comes from `squeue`; results come from the files the array tasks write.
 */
import { helperLaunch, runChild } from "../policy/process.ts";
import { join } from "node:path";
import { UsageError } from "../errors.ts";

/** What to submit. */
export interface SubmitRequest {
  tasksFile: string;
  out: string;
  /** Task indices to run (array indices). */
  indices: readonly number[];
  /** At most this many array tasks at once (`%C`). */
  concurrency: number;
  /** The command that runs Deft on a node, e.g. `[deno, run, …, main.ts]`. */
  deft: readonly string[];
  /** Flags each `deft batch --index` passes on (model, timeout, …). */
  batchArgs: readonly string[];
  /** Extra sbatch options, as given with `--slurm-arg`. */
  slurmArgs: readonly string[];
  /** Seconds the slowest task may take; sets sbatch's `--time` unless `slurmArgs` does. */
  maxTaskSeconds: number;
}

/** Writes the job script and submits the array; returns the job id. */
export async function submitArray(request: SubmitRequest): Promise<string> {
  const dir = join(request.out, "slurm");
  await Deno.mkdir(dir, { recursive: true });
  const script = join(dir, "array.sh");
  const command = [
    ...request.deft,
    "batch",
    request.tasksFile,
    "--out",
    request.out,
    ...request.batchArgs,
  ].map(shellQuote).join(" ");
  await Deno.writeTextFile(
    script,
    "#!/bin/bash\n# Written by deft batch --slurm: one array task runs one task of the batch.\n" +
      `exec ${command} --index "$SLURM_ARRAY_TASK_ID"\n`,
    { mode: 0o755 },
  );
  const hasTime = request.slurmArgs.some((a) => /^(--time(=|$)|-t)/.test(a));
  // Slurm's limit leaves room for checkout, test and the grace period after Deft's own limit.
  const minutes = Math.ceil((request.maxTaskSeconds * 1.25 + 60) / 60);
  const args = [
    "--parsable",
    `--array=${indexRanges(request.indices)}%${request.concurrency}`,
    "--job-name=deft-batch",
    `--output=${join(dir, "%A_%a.out")}`,
    `--chdir=${request.out}`,
    ...(hasTime ? [] : [`--time=${minutes}`]),
    ...request.slurmArgs,
    script,
  ];
  const out = await slurmCommand("sbatch", args);
  if (!out.ok) throw new Error(`sbatch refused the job array: ${out.stderr.trim()}`);
  const id = out.stdout.trim().split(";")[0];
  if (!/^\d+$/.test(id)) throw new Error(`sbatch printed no job id: ${out.stdout.trim()}`);
  return id;
}

/** State of each array task the scheduler still knows, by task index (`PENDING`, `RUNNING`, …). */
export async function queuedTasks(jobIds: readonly string[]): Promise<Map<number, string>> {
  const states = new Map<number, string>();
  if (jobIds.length === 0) return states;
  const out = await slurmCommand("squeue", ["-h", "-r", "-j", jobIds.join(","), "-o", "%i|%T"]);
  if (!out.ok) {
    // squeue fails for job ids it has forgotten, which means nothing of them is queued.
    if (/Invalid job id/i.test(out.stderr)) return states;
    throw new Error(`squeue failed: ${out.stderr.trim()}`);
  }
  for (const line of out.stdout.split("\n")) {
    const match = /^\d+_(\d+)\|(\w+)/.exec(line.trim());
    if (match) states.set(Number(match[1]), match[2]);
  }
  return states;
}

/** `0-2,5,7-8` from `[0, 1, 2, 5, 7, 8]`. */
export function indexRanges(indices: readonly number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}

/** `'it'\''s'`: a word for bash, whatever it holds. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_\/.:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

async function slurmCommand(
  name: string,
  args: string[],
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  try {
    // The array's tasks inherit what sbatch is given: Deft's own environment, keys included.
    const out = await runChild(helperLaunch(name, args, "deft"));
    const decoder = new TextDecoder();
    return {
      ok: out.success,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new UsageError(
        `${name} is not on PATH: --slurm needs the Slurm client tools (and SLURM_CONF when the ` +
          `cluster's config is not in /etc/slurm).`,
      );
    }
    throw e;
  }
}
