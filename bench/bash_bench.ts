/**
 * The bash tool's round trip against spawning a fresh shell, measured in the same run, and where
 * the time of one `true` goes, hop by hop: a bare persistent bash, the session's protocol
 * (`BashSession`), the executor with the tool in this process, the same through the tool worker,
 * and a whole `deft serve` (stdin to stdout). Every layer is timed in blocks interleaved with the
 * others and with `bash -c true`, so load falls on all alike; each figure is a median. Target:
 * persistent <= 1/8 of a fresh spawn.
 *
 * Usage: `deno run -A bench/bash_bench.ts [--calls N]`
 */
import { deftFlags } from "../scripts/deft_flags.ts";
import { BashTool } from "../src/tools/bash/tool.ts";
import { BashSession } from "../src/tools/bash/session.ts";
import { ToolExecutor } from "../src/tools/executor.ts";
import type { ToolSettings } from "../src/tools/base.ts";
import { createHostedTools, hostDirs } from "../src/tools/host/mod.ts";
import { processPolicy } from "../src/policy/process.ts";
import { findBwrap, SandboxUnavailableError } from "../src/policy/sandbox.ts";

const TARGET_RATIO = 1 / 8;
const BLOCK = 25;
const MAIN = new URL("../main.ts", import.meta.url).pathname;

type Trip = () => Promise<number>;
interface Layer {
  label: string;
  trip: Trip;
  close(): Promise<void>;
}

/** Runs the benchmark and prints its lines. */
export default async function bashBench(args: string[]): Promise<void> {
  const calls = intFlag(args, "--calls", 500);
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-bench-" }));
  const sandbox: ToolSettings["sandbox"] = hasBwrap() ? "workspace-write" : "none";
  const layers: Layer[] = [];
  try {
    layers.push(bareShell());
    layers.push(await sessionLayer(workspace, sandbox));
    layers.push(executorLayer(workspace, "none"));
    if (sandbox !== "none") layers.push(executorLayer(workspace, sandbox));
    layers.push(await workerLayer(workspace, sandbox));
    layers.push(serveLayer(workspace));
    const fresh: Layer = { label: "fresh bash -c true", trip: spawnTrue, close: async () => {} };
    const timed = [...layers, fresh];
    // Warm-up: the first calls start shells, the worker and serve's tools.
    for (const layer of timed) for (let i = 0; i < 30; i++) await layer.trip();
    const times = timed.map(() => [] as number[]);
    for (let done = 0; done < calls; done += BLOCK) {
      for (const [i, layer] of timed.entries()) {
        for (let j = 0; j < BLOCK; j++) times[i].push(await layer.trip());
      }
    }
    const medians = times.map(median);
    const base = medians[medians.length - 1];
    const persistent = medians[timed.findIndex((l) => l.label.includes("executor"))];
    console.log(
      `bash: persistent round trip median ${ms(persistent)} ms (${calls} calls through the ` +
        `executor); fresh bash -c true ${ms(base)} ms; ratio ${(persistent / base).toFixed(3)} ` +
        `(target <= ${TARGET_RATIO})` + (persistent / base <= TARGET_RATIO ? "" : " MISSED"),
    );
    if (sandbox === "none") {
      console.log("bash: sandboxed round trip skipped: bubblewrap is not installed");
    }
    console.log(`bash: one \`true\`, layer by layer (median ms; ratio to a fresh bash -c true):`);
    for (const [i, layer] of timed.entries()) {
      console.log(
        `bash:   ${layer.label.padEnd(64)} ${ms(medians[i]).padStart(6)}  ` +
          `${(medians[i] / base).toFixed(3)}`,
      );
    }
  } finally {
    for (const layer of layers) await layer.close().catch(() => {});
    await Deno.remove(workspace, { recursive: true });
  }
}

/** A bare persistent bash: `true` and an `echo` of a marker, read back from its stdout. */
function bareShell(): Layer {
  const child = new Deno.Command("bash", {
    args: ["--noprofile", "--norc"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = lineReader(child.stdout);
  const line = new TextEncoder().encode("true; echo __mark\n");
  return {
    label: "a bare persistent bash (true; echo a marker)",
    trip: async () => {
      const start = performance.now();
      await writer.write(line);
      await lines.next();
      return performance.now() - start;
    },
    close: async () => {
      await writer.close();
      await child.status;
    },
  };
}

/** The session: its protocol (both pipes, end markers), in this thread. */
async function sessionLayer(workspace: string, sandbox: ToolSettings["sandbox"]): Promise<Layer> {
  const outputDir = await Deno.makeTempDir({ dir: workspace, prefix: "out-" });
  const session = await BashSession.start({
    policy: processPolicy(workspace, { sandbox }),
    cwd: workspace,
    outputDir,
    outputLimit: 30_000,
  });
  let call = 0;
  return {
    label: `+ the session's protocol (BashSession, ${sandbox})`,
    trip: async () => {
      const start = performance.now();
      const result = await session.run("true", 60_000, ++call);
      if (result.end !== "completed" || result.status !== 0) throw new Error("true failed");
      return performance.now() - start;
    },
    close: () => session.stop(),
  };
}

/** The executor with the bash tool in this thread. */
function executorLayer(workspace: string, sandbox: ToolSettings["sandbox"]): Layer {
  const context = { provider: "openai" as const, workspace, settings: { sandbox } };
  const label = `+ the executor and the bash tool, in process (${sandbox})`;
  return toolLayer(label, new ToolExecutor([new BashTool(context)]));
}

/** The executor with bash in the tool worker, as every command runs it. */
async function workerLayer(workspace: string, sandbox: ToolSettings["sandbox"]): Promise<Layer> {
  const settings: ToolSettings = { sandbox };
  const context = { provider: "openai" as const, workspace, settings };
  const tools = await createHostedTools(context, ["bash"], hostDirs(settings));
  return toolLayer(`+ the tool worker (${sandbox})`, new ToolExecutor(tools));
}

function toolLayer(label: string, executor: ToolExecutor): Layer {
  let n = 0;
  return {
    label,
    trip: async () => {
      const call = { name: "bash", call_id: `c${++n}`, arguments: { command: "true" } };
      const start = performance.now();
      const result = await executor.executeToolCall(call);
      const elapsed = performance.now() - start;
      if (!result.success) throw new Error(`bash call failed: ${result.error}`);
      return elapsed;
    },
    close: async () => {
      await executor.closeTools();
    },
  };
}

/** A whole `deft serve` (default sandbox): a request line on its stdin to the reply's line. */
function serveLayer(workspace: string): Layer {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), MAIN, "serve", "-w", workspace],
    cwd: workspace,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = lineReader(child.stdout);
  const encoder = new TextEncoder();
  let n = 0;
  return {
    label: "+ deft serve (stdin, JSON, stdout; a client's view)",
    trip: async () => {
      const request = { id: ++n, name: "bash", arguments: { command: "true" } };
      const line = encoder.encode(JSON.stringify(request) + "\n");
      const start = performance.now();
      await writer.write(line);
      const reply = await lines.next();
      const elapsed = performance.now() - start;
      if (reply === null || !reply.includes('"success":true')) {
        throw new Error(`deft serve: unexpected reply: ${reply}`);
      }
      return elapsed;
    },
    close: async () => {
      await writer.close().catch(() => {});
      await child.status;
    },
  };
}

async function spawnTrue(): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command("bash", {
    args: ["-c", "true"],
    stdout: "null",
    stderr: "null",
  }).output();
  if (!out.success) throw new Error("bash -c true failed");
  return performance.now() - start;
}

function lineReader(stream: ReadableStream<Uint8Array>): { next(): Promise<string | null> } {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  return {
    async next() {
      while (true) {
        const newline = pending.indexOf("\n");
        if (newline >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          return line;
        }
        const { value, done } = await reader.read();
        if (done) return null;
        pending += decoder.decode(value, { stream: true });
      }
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
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
