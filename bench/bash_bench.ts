/**
 * The bash tool's round trip against spawning a fresh shell, measured in the same run: the median
 * time of `true` through the executor in the persistent session (plain and sandboxed), and the
 * median time of `bash -c true` from Deno. Target: persistent <= 1/8 of a fresh spawn.
 *
 * Usage: `deno run -A bench/bash_bench.ts [--calls N] [--spawns N]`
 */
import { BashTool } from "../src/tools/bash/tool.ts";
import { ToolExecutor } from "../src/tools/executor.ts";
import type { ToolSettings } from "../src/tools/base.ts";
import { findBwrap, SandboxUnavailableError } from "../src/policy/sandbox.ts";

const TARGET_RATIO = 1 / 8;

/** Runs the benchmark and prints its lines. */
export default async function bashBench(args: string[]): Promise<void> {
  const calls = intFlag(args, "--calls", 500);
  const spawns = intFlag(args, "--spawns", 200);
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-bench-" }));
  try {
    const persistent = await roundTrips(workspace, { sandbox: "none" }, calls);
    const fresh = await freshSpawns(spawns);
    const ratio = persistent.median / fresh.median;
    console.log(
      `bash: persistent round trip median ${ms(persistent.median)} ms (p90 ${
        ms(persistent.p90)
      }, ` +
        `${calls} calls through the executor); fresh bash -c true ${ms(fresh.median)} ms ` +
        `(${spawns} spawns); ratio ${ratio.toFixed(3)} (target <= ${TARGET_RATIO})` +
        (ratio <= TARGET_RATIO ? "" : " MISSED"),
    );
    if (!hasBwrap()) {
      console.log("bash: sandboxed round trip skipped: bubblewrap is not installed");
      return;
    }
    const sandboxed = await roundTrips(workspace, { sandbox: "workspace-write" }, calls);
    const sandboxRatio = sandboxed.median / fresh.median;
    console.log(
      `bash: sandboxed round trip median ${ms(sandboxed.median)} ms (p90 ` +
        `${ms(sandboxed.p90)}); ratio to fresh bash -c true ${sandboxRatio.toFixed(3)} ` +
        `(target <= ${TARGET_RATIO})` + (sandboxRatio <= TARGET_RATIO ? "" : " MISSED"),
    );
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
}

interface Timing {
  median: number;
  p90: number;
}

async function roundTrips(workspace: string, settings: ToolSettings, n: number): Promise<Timing> {
  const executor = new ToolExecutor([new BashTool({ provider: "openai", workspace, settings })]);
  try {
    const call = (i: number) =>
      executor.executeToolCall({ name: "bash", call_id: `c${i}`, arguments: { command: "true" } });
    for (let i = 0; i < 50; i++) await check(call(i));
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      await check(call(i));
      times.push(performance.now() - start);
    }
    return summarize(times);
  } finally {
    await executor.closeTools();
  }
}

async function freshSpawns(n: number): Promise<Timing> {
  const spawn = () =>
    new Deno.Command("bash", { args: ["-c", "true"], stdout: "null", stderr: "null" }).output();
  for (let i = 0; i < 10; i++) await spawn();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await spawn();
    times.push(performance.now() - start);
  }
  return summarize(times);
}

async function check(result: Promise<{ success: boolean; error: string | null }>): Promise<void> {
  const r = await result;
  if (!r.success) throw new Error(`bash call failed: ${r.error}`);
}

function summarize(times: number[]): Timing {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9) };
}

function hasBwrap(): boolean {
  try {
    findBwrap();
    return true;
  } catch (e) {
    if (e instanceof SandboxUnavailableError) return false;
    throw e;
  }
}

function intFlag(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} needs a positive integer`);
  return value;
}

function ms(value: number): string {
  return value < 1 ? value.toFixed(3) : value.toFixed(2);
}

if (import.meta.main) await bashBench(Deno.args);
