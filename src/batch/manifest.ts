/**
 * `DIR/batch.json`: what `deft batch status DIR` needs to know about a batch without its command
 * line: the task file, the task ids in order, and the Slurm job arrays submitted for it.
 */
import { readOwnText } from "../policy/own_file.ts";
import { join } from "node:path";
import { appendLine } from "./results.ts";

/** The manifest of a batch's output directory. */
export interface BatchManifest {
  tasks_file: string;
  ids: string[];
  created_at: string;
  /** Job ids of the arrays submitted, oldest first. */
  slurm_jobs: string[];
}

/** Reads DIR/batch.json; undefined when the directory holds no batch. */
export async function readManifest(out: string): Promise<BatchManifest | undefined> {
  let text: string;
  try {
    text = await readOwnText(join(out, "batch.json"), {
      limit: 64 << 20,
      what: "a batch manifest",
    });
  } catch {
    return undefined;
  }
  const manifest = JSON.parse(text) as BatchManifest;
  manifest.slurm_jobs = [...manifest.slurm_jobs ?? [], ...await readJobLog(out)];
  return manifest;
}

/** Writes DIR/batch.json for these tasks, keeping the jobs an earlier run submitted. */
export async function writeManifest(out: string, tasksFile: string, ids: string[]): Promise<void> {
  const old = await readManifest(out).catch(() => undefined);
  const manifest: BatchManifest = {
    tasks_file: tasksFile,
    ids,
    created_at: old?.created_at ?? new Date().toISOString(),
    slurm_jobs: [],
  };
  const path = join(out, "batch.json");
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(manifest, null, 2) + "\n");
  await Deno.rename(temp, path);
}

/** Records a submitted job array (appended, so concurrent submitters lose nothing). */
export async function addSlurmJob(out: string, jobId: string): Promise<void> {
  await appendLine(join(out, "slurm", "jobs.txt"), jobId);
}

async function readJobLog(out: string): Promise<string[]> {
  try {
    const text = await readOwnText(join(out, "slurm", "jobs.txt"), {
      limit: 16 << 20,
      what: "a Slurm job log",
    });
    return text.split("\n").map((l) => l.trim()).filter((l) => /^\d+$/.test(l));
  } catch {
    return [];
  }
}
