/**
 * Memory of a long-lived server: peak resident memory (VmHWM) of `deft serve` and `deft mcp` after
 * 1,000, 10,000 and 100,000 trivial bash calls, and the last as a ratio to the first.
 * Target: within 1.2x (a server that keeps something of every call grows without bound).
 *
 * Usage: `deno run -A bench/memory_bench.ts [--calls N]` (N: the last checkpoint, default 100000)
 */
import { deftFlags } from "../scripts/deft_flags.ts";

const TARGET_RATIO = 1.2;
const WINDOW = 100;
const ROOT = new URL("..", import.meta.url).pathname;

type Mode = "serve" | "mcp";

/** Runs the benchmark and prints its lines. */
export default async function memoryBench(args: string[]): Promise<void> {
  const last = intFlag(args, "--calls", 100_000);
  const checkpoints = [1_000, 10_000, 100_000].filter((n) => n < last).concat(last);
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-bench-mem-" }));
  try {
    for (const mode of ["serve", "mcp"] as const) {
      const peaks = await peaksOf(mode, workspace, checkpoints);
      const ratio = peaks[peaks.length - 1].mb / peaks[0].mb;
      console.log(
        `memory (${mode}): peak RSS ` +
          peaks.map((p) => `${p.mb.toFixed(1)} MB after ${p.calls} calls (${p.seconds} s)`)
            .join(", ") +
          `; last/first ${ratio.toFixed(2)}x (target <= ${TARGET_RATIO})` +
          (ratio <= TARGET_RATIO ? "" : " MISSED"),
      );
    }
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
}

async function peaksOf(
  mode: Mode,
  workspace: string,
  checkpoints: number[],
): Promise<{ calls: number; mb: number; seconds: number }[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...deftFlags(),
      `${ROOT}main.ts`,
      mode,
      "-w",
      workspace,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = replyLines(child.stdout);
  const encoder = new TextEncoder();
  const started = performance.now();
  try {
    if (mode === "mcp") {
      await writer.write(encoder.encode(
        JSON.stringify({
          jsonrpc: "2.0",
          id: "init",
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "bench", version: "1" },
          },
        }) + "\n",
      ));
      await lines.next();
      await writer.write(encoder.encode(
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n",
      ));
    }
    const peaks: { calls: number; mb: number; seconds: number }[] = [];
    let sent = 0;
    for (const checkpoint of checkpoints) {
      while (sent < checkpoint) {
        const count = Math.min(WINDOW, checkpoint - sent);
        let text = "";
        for (let i = 0; i < count; i++) text += callLine(mode, sent + i) + "\n";
        await writer.write(encoder.encode(text));
        for (let i = 0; i < count; i++) {
          const reply = await lines.next();
          if (reply.done) throw new Error(`deft ${mode} ended after ${sent + i} calls`);
          if (!reply.value.includes("ok")) throw new Error(`unexpected reply: ${reply.value}`);
        }
        sent += count;
      }
      peaks.push({
        calls: checkpoint,
        mb: await peakRssMb(child.pid),
        seconds: Math.round((performance.now() - started) / 1000),
      });
    }
    return peaks;
  } finally {
    await writer.close().catch(() => {});
    await child.status;
  }
}

function callLine(mode: Mode, n: number): string {
  const args = { command: "echo ok" };
  return JSON.stringify(
    mode === "serve" ? { id: n, name: "bash", arguments: args } : {
      jsonrpc: "2.0",
      id: n,
      method: "tools/call",
      params: { name: "bash", arguments: args },
    },
  );
}

async function* replyLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let pending = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, newline);
      pending = pending.slice(newline + 1);
    }
  }
}

async function peakRssMb(pid: number): Promise<number> {
  // Through a child process: Deno lets a program read /proc only with --allow-all.
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`], stdout: "piped" })
    .output();
  const status = new TextDecoder().decode(out.stdout);
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

function intFlag(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} needs a positive integer`);
  return value;
}

if (import.meta.main) await memoryBench(Deno.args);
