/**
 * A long headless run: `deft run` against a model that answers at once, one small bash call per
 * step, 500 steps. Deft's own time per step (the step's wall time: the model's answer and the
 * tool's work are both near zero here) is compared between steps 10–60 and 450–500, from the
 * trajectory's step times. Target: the late steps within 1.2x of the early ones (a run whose every
 * step rewrites or re-masks what came before grows quadratically).
 *
 * Two more figures of the same run. Memory: Deft's resident set when the model is asked for step
 * 500, less the conversation it sends (what the session must hold), against the same at step 50
 * (target 1.2x). Resuming: from launch to the first model request of `deft -p … -r` on the
 * 500-step session, against the same on a 10-step one (target 1.5x).
 *
 * Usage: `deno run -A bench/long_session_bench.ts [--steps N]` (default 500)
 */
import { join } from "node:path";
import { deftFlags } from "../scripts/deft_flags.ts";
import { chatToolCalls, MockLLM } from "../tests/helpers/mock_llm.ts";

const TARGET_RATIO = 1.2;
const ROOT = new URL("..", import.meta.url).pathname;

/** Runs the benchmark and prints its lines. */
export default async function longSessionBench(args: string[]): Promise<void> {
  const at = args.indexOf("--steps");
  const steps = at >= 0 ? Number(args[at + 1]) : 500;
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-bench-long-" }));
  try {
    const long = await session(home, "long", steps, [50, steps - 1]);
    if (!long) return;
    const times = long.data.agent_steps.map((s: { timestamp: string }) => Date.parse(s.timestamp));
    // The mean over a window of 50 steps: step times are whole milliseconds, a few each.
    const perStep = (from: number, to: number) => (times[to - 1] - times[from - 1]) / (to - from);
    const early = perStep(10, 60);
    const late = perStep(steps - 50, steps);
    const ratio = late / Math.max(early, 0.5);
    console.log(
      `long session: ${times.length} steps; Deft's time per step ${early.toFixed(1)} ms at ` +
        `steps 10-60, ${late.toFixed(1)} ms at ${steps - 50}-${steps}; late/early ` +
        `${ratio.toFixed(2)}x (target <= ${TARGET_RATIO})` + missed(ratio, TARGET_RATIO),
    );
    const [at50, atEnd] = long.samples;
    if (at50 && atEnd) {
      const own = (s: Sample) => s.rss - s.conversation;
      const memory = own(atEnd) / own(at50);
      console.log(
        `long session: resident memory ${mib(at50.rss)} at step 50 (conversation ` +
          `${kib(at50.conversation)}), ${mib(atEnd.rss)} at step ${steps - 1} (conversation ` +
          `${kib(atEnd.conversation)}); beyond the conversation ${memory.toFixed(2)}x ` +
          `(target <= ${MEMORY_RATIO})` + missed(memory, MEMORY_RATIO),
      );
    }
    const short = await session(home, "short", 10, []);
    if (!short) return;
    // Interleaved, the median of five each: a start is tens of milliseconds of noise.
    const resumedLong: number[] = [];
    const resumedShort: number[] = [];
    for (let i = 0; i < 5; i++) {
      resumedLong.push(await resumeStart(home, long.path));
      resumedShort.push(await resumeStart(home, short.path));
    }
    const resume = median(resumedLong) / median(resumedShort);
    console.log(
      `long session: resuming the ${steps}-step session ${median(resumedLong).toFixed(0)} ms to ` +
        `its first model request, a 10-step one ${median(resumedShort).toFixed(0)} ms; ` +
        `${resume.toFixed(2)}x (target <= ${RESUME_RATIO})` + missed(resume, RESUME_RATIO),
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

const MEMORY_RATIO = 1.2;
const RESUME_RATIO = 1.5;

/** Deft's resident set and the conversation's size when a request arrived, in bytes. */
interface Sample {
  rss: number;
  conversation: number;
}

/**
 * `deft run` of `steps` steps (a bash call each, then task_done) in a workspace under `home`,
 * with the resident set sampled when the model is asked for each step of `sampleAt`.
 */
async function session(home: string, name: string, steps: number, sampleAt: number[]) {
  const workspace = `${home}/${name}`;
  await Deno.mkdir(workspace);
  const path = `${workspace}/.traj.json`;
  let asked = 0;
  let pid = 0;
  const samples: Sample[] = [];
  const mock = MockLLM.start([], (req) => {
    asked++;
    if (sampleAt.includes(asked) && pid) {
      samples.push({
        rss: residentBytes(pid),
        conversation: JSON.stringify((req.body as { messages?: unknown }).messages ?? []).length,
      });
    }
    return asked < steps
      ? chatToolCalls([["bash", { command: `echo step ${asked}` }]])
      : chatToolCalls([["task_done", {}]]);
  });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...deftFlags(),
        `${ROOT}main.ts`,
        "run",
        "keep going",
        "-w",
        workspace,
        ...mockFlags(mock.url),
        "--max-steps",
        String(steps + 5),
        "-t",
        path,
      ],
      env: { NO_COLOR: "1", DEFT_RETRY_BASE_MS: "10", HOME: home },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    pid = child.pid;
    const out = await child.output();
    if (!out.success) {
      console.log(
        `long session: deft run failed: ${new TextDecoder().decode(out.stderr).slice(-400)}`,
      );
      return undefined;
    }
    return { path, samples, data: JSON.parse(await Deno.readTextFile(path)) };
  } finally {
    await mock.close();
  }
}

/** Milliseconds from launching `deft -p … -r PATH` to its first model request. */
async function resumeStart(home: string, path: string): Promise<number> {
  let first = 0;
  const mock = MockLLM.start([], () => {
    first ||= performance.now();
    return chatToolCalls([["task_done", {}]]);
  });
  try {
    const started = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...deftFlags(),
        `${ROOT}main.ts`,
        "-p",
        "one more",
        "-r",
        path,
        "-w",
        join(path, ".."),
        ...mockFlags(mock.url),
      ],
      env: { NO_COLOR: "1", HOME: home },
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!first) {
      throw new Error(
        `the resumed session never asked the model: ${
          new TextDecoder().decode(out.stderr).slice(-400)
        }`,
      );
    }
    return first - started;
  } finally {
    await mock.close();
  }
}

function mockFlags(url: string): string[] {
  return [
    "--provider",
    "openai_compatible",
    "-m",
    "mock-model",
    "--model-base-url",
    `${url}/v1`,
    "-k",
    "k",
  ];
}

/** The resident set of process `pid` in bytes (Linux). */
function residentBytes(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(0)} KiB`;
}

function missed(ratio: number, target: number): string {
  return ratio <= target ? "" : " MISSED";
}

if (import.meta.main) await longSessionBench(Deno.args);
