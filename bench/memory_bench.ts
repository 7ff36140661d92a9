/**
 * Memory of a long-lived server: peak resident memory (VmHWM) of `deft serve` and `deft mcp` after
 * 1,000, 10,000 and 100,000 trivial bash calls, and the last as a ratio to the first.
 * Target: within 1.2x (a server that keeps something of every call grows without bound).
 *
 * Then the resident memory (VmRSS) of an idle session of each long-lived front end, ready and
 * left alone for IDLE_SETTLE_MS: `deft interactive` at its prompt (on a pty; its start work done),
 * `deft serve` after one call, `deft acp` with one session open. Each as a ratio to an idle Deno
 * (a script waiting on its input, the same flags) in the same run: the budgets `idle_rss_*` in
 * bench/budgets.ts (issue 51: today 42/35 MiB for interactive/serve).
 *
 * Usage: `deno run -A bench/memory_bench.ts [--calls N] [--idle-only]` (N: the last checkpoint,
 * default 100000)
 */
import { BUDGETS, type FigureId, overBudget } from "./budgets.ts";
import { deftFlags } from "../scripts/deft_flags.ts";

const TARGET_RATIO = 1.2;
const WINDOW = 100;
const ROOT = new URL("..", import.meta.url).pathname;

type Mode = "serve" | "mcp";

/** Runs the benchmark and prints its lines. */
export default async function memoryBench(args: string[]): Promise<void> {
  await idleBench();
  if (args.includes("--idle-only")) return;
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

/** How long a ready session is left alone before its memory is read. */
const IDLE_SETTLE_MS = 2000;

/** Idle resident memory of each front end, as a ratio to an idle Deno's. */
async function idleBench(): Promise<void> {
  const place = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-bench-idle-" }));
  try {
    const home = `${place}/home`;
    const repo = `${place}/repo`;
    await Deno.mkdir(home);
    await Deno.mkdir(repo);
    await Deno.writeTextFile(`${repo}/calc.py`, "def add(a, b):\n    return a - b\n");
    for (const args of [["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]]) {
      await new Deno.Command("git", {
        args: ["-c", "user.name=b", "-c", "user.email=b@b", ...args],
        cwd: repo,
      }).output();
    }
    const env = { HOME: home, XDG_STATE_HOME: `${home}/state`, NO_COLOR: "1", TERM: "xterm" };
    const idle = `${place}/idle.ts`;
    await Deno.writeTextFile(idle, "await Deno.stdin.read(new Uint8Array(1));\n");
    const base = await idleRss([Deno.execPath(), "run", ...deftFlags(), idle], repo, env, []);
    console.log(`memory (idle): an idle Deno (same flags) ${base.toFixed(1)} MiB`);
    const figures: [FigureId, string, number][] = [
      ["idle_rss_interactive", "deft interactive at its prompt", await idleInteractive(repo, env)],
      [
        "idle_rss_serve",
        "deft serve after one call",
        await idleRss(deft("serve", repo), repo, env, [
          JSON.stringify({ id: 1, name: "task_done", arguments: {} }),
        ]),
      ],
      [
        "idle_rss_acp",
        "deft acp with one session",
        await idleRss(deft("acp", repo), repo, env, [
          rpc(1, "initialize", { protocolVersion: 1, clientCapabilities: {} }),
          rpc(2, "session/new", { cwd: repo, mcpServers: [] }),
        ]),
      ],
    ];
    for (const [id, what, mib] of figures) {
      const ratio = mib / base;
      console.log(
        `memory (idle): ${what} ${mib.toFixed(1)} MiB; ratio ${ratio.toFixed(2)} (budget ` +
          `${BUDGETS[id].budget}, target ${BUDGETS[id].target})` +
          (overBudget(id, ratio) ? " OVER BUDGET" : ""),
      );
    }
  } finally {
    await Deno.remove(place, { recursive: true });
  }
}

/** `deft COMMAND` in `repo`, with a model that is never asked while idle. */
function deft(command: string, repo: string): string[] {
  const model = command === "serve"
    ? []
    : ["-p", "openai_compatible", "-m", "bench", "--model-base-url", "http://127.0.0.1:9/v1"]
      .concat(["-k", "k"]);
  return [Deno.execPath(), "run", ...deftFlags(), `${ROOT}main.ts`, command, "-w", repo, ...model];
}

function rpc(id: number, method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/**
 * VmRSS in MiB of `argv` once it answered each of `lines` (one reply line each, in order) and sat
 * idle IDLE_SETTLE_MS; its input is then closed.
 */
async function idleRss(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  lines: string[],
): Promise<number> {
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const replies = replyLines(child.stdout);
  try {
    for (const line of lines) {
      await writer.write(new TextEncoder().encode(line + "\n"));
      const reply = await replies.next();
      if (reply.done) throw new Error(`${argv.join(" ")} ended before answering ${line}`);
    }
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    return await rssMb(child.pid);
  } finally {
    await writer.close().catch(() => {});
    await child.status;
  }
}

/** VmRSS in MiB of `deft interactive` at its prompt on a pty, its start work done. */
async function idleInteractive(repo: string, env: Record<string, string>): Promise<number> {
  const script = `
import os, pty, re, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out, start = b"", time.monotonic()
while b"deft> " not in out and time.monotonic() - start < 60:
    if select.select([fd], [], [], 0.5)[0]:
        out += os.read(fd, 65536)
time.sleep(${IDLE_SETTLE_MS / 1000})
status = open(f"/proc/{pid}/status").read()
print(re.search(r"VmRSS:\\s+(\\d+) kB", status).group(1) if b"deft> " in out else -1)
os.write(fd, b"\\x04")
end, gone = time.monotonic() + 20, False
while not gone and time.monotonic() < end:
    gone = os.waitpid(pid, os.WNOHANG)[0] != 0
    try:
        if not gone and select.select([fd], [], [], 0.2)[0]:
            os.read(fd, 65536)
    except OSError:
        pass
if not gone:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
`;
  const out = await new Deno.Command("python3", {
    args: ["-c", script, ...deft("interactive", repo)],
    cwd: repo,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const kb = Number(new TextDecoder().decode(out.stdout).trim());
  if (!(kb > 0)) throw new Error(`no deft> prompt: ${new TextDecoder().decode(out.stderr)}`);
  return kb / 1024;
}

async function rssMb(pid: number): Promise<number> {
  // Through a child process: Deno lets a program read /proc only with --allow-all.
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`], stdout: "piped" })
    .output();
  const status = new TextDecoder().decode(out.stdout);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

if (import.meta.main) await memoryBench(Deno.args);
