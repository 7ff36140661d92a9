/**
 * The latency figures of issue 39, each a ratio of Deft's time to a baseline measured in the same
 * run, interleaved with it (subject, baseline, subject, ...) so that load on a shared machine
 * falls on both alike. Each figure is a median of its repeats. `latency_bench.ts` prints them all
 * against `budgets.ts`; the budget test (tests/bench/budget_test.ts) checks the cheap ones.
 */
import { deftFlags } from "../scripts/deft_flags.ts";
import { EditTool } from "../src/tools/edit/tool.ts";
import { median, timeCommand } from "./timing.ts";
import type { FigureId } from "./budgets.ts";
import { deftToolStrReplace as strReplaceAgainstFloor, type FloorPart } from "./floors.ts";

export { sandboxedView } from "./floors.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;

/** One measured figure: Deft's median, the baseline's median, and their ratio. */
export interface Figure {
  id: FigureId;
  subject: number;
  baseline: number;
  ratio: number;
  runs: number;
  /** For a floor (the sum of several baselines): each part and its median. */
  parts?: FloorPart[];
}

/** A place to measure in: a temp folder with a hello-world and a workspace, removed by `close`. */
export interface Bench {
  tmp: string;
  ws: string;
  hello: string;
  /** `deno run` argv of Deft with the `deft` task's flags. */
  deft(...args: string[]): string[];
  close(): Promise<void>;
}

/** Makes the temp folder the figures run in (inside `parent`, default the system's temp dir). */
export async function openBench(parent?: string): Promise<Bench> {
  const tmp = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "deft-latency-", dir: parent }),
  );
  const ws = `${tmp}/ws`;
  await Deno.mkdir(ws);
  const hello = `${tmp}/hello.ts`;
  await Deno.writeTextFile(hello, 'console.log("hello");\n');
  const flags = deftFlags();
  return {
    tmp,
    ws,
    hello,
    deft: (...args) => ["run", ...flags, MAIN, ...args],
    close: () => Deno.remove(tmp, { recursive: true }),
  };
}

/** Times `subject` and `baseline` alternately, `runs` times each after one warm-up of each. */
export async function paired(
  id: FigureId,
  runs: number,
  subject: () => Promise<number>,
  baseline: () => Promise<number>,
): Promise<Figure> {
  const [figure] = await interleaved(runs, [subject], baseline);
  return { id, ...figure, runs };
}

const deno = Deno.execPath();

/**
 * `deft tool task_done '{}'` and `deft --help`, each against `deno run` of a hello-world with the
 * same flags, from one interleaved series (task_done, --help, hello-world, ...).
 */
export async function startFigures(bench: Bench, runs: number): Promise<[Figure, Figure]> {
  const [taskDone, help] = await interleaved(
    runs,
    [
      () => timeCommand(deno, bench.deft("tool", "task_done", "{}", "-w", bench.ws), bench.tmp),
      () => timeCommand(deno, bench.deft("--help"), bench.tmp),
    ],
    () => timeCommand(deno, ["run", ...deftFlags(), bench.hello], bench.tmp),
  );
  return [{ id: "task_done_start", ...taskDone, runs }, { id: "help", ...help, runs }];
}

// Round trips (and spawns) measured in a row before switching to the other.
const BLOCK = 25;

const LINE =
  "    const total = items.reduce((sum, item) => sum + item.price * item.qty, 0); // x\n";

/** Writes a ~`mb` MB text file with one `const marker = 0;` line in its middle; returns its path. */
export async function bigFile(dir: string, mb = 20): Promise<{ path: string; lines: number }> {
  const path = `${dir}/big.ts`;
  const half = Math.ceil((mb * 1_000_000) / LINE.length / 2);
  await Deno.writeTextFile(path, LINE.repeat(half) + "const marker = 0;\n" + LINE.repeat(half));
  return { path, lines: 2 * half + 1 };
}

// Swaps the marker back and forth, so every call is a real edit of the same size.
function markerFlip(): () => { old_str: string; new_str: string } {
  let n = 0;
  return () => {
    const [from, to] = n++ % 2 === 0 ? ["0", "1"] : ["1", "0"];
    return { old_str: `const marker = ${from};`, new_str: `const marker = ${to};` };
  };
}

const PYTHON_READ_WRITE = "import sys, time\np = sys.argv[1]\nstart = time.perf_counter()\n" +
  "with open(p) as f: t = f.read()\nwith open(p, 'w') as f: f.write(t)\n" +
  "print((time.perf_counter() - start) * 1000)\n";

/**
 * `python3` reading the file as text and writing it back. `whole`: the process, start to exit
 * (the baseline of a `deft tool` process); otherwise the read + write alone, as Python times it
 * (the baseline of the editor in this process, which starts nothing either).
 */
function pythonReadWrite(path: string, cwd: string, whole: boolean): () => Promise<number> {
  return async () => {
    const start = performance.now();
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command("python3", {
        args: ["-c", PYTHON_READ_WRITE, path],
        cwd,
        stdout: "piped",
        stderr: "piped",
      }).output();
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      throw new Error("python3 is not installed: it is the baseline of the 20 MB edit figures");
    }
    const elapsed = performance.now() - start;
    if (!out.success) throw new Error(`python3 failed: ${new TextDecoder().decode(out.stderr)}`);
    return whole ? elapsed : Number(new TextDecoder().decode(out.stdout).trim());
  };
}

/**
 * A `str_replace` on a 20 MB file through `deft tool` (default sandbox), against Python reading
 * and writing the same file plus the floor of a sandboxed one-off call (floors.ts).
 */
export function deftToolStrReplace(bench: Bench, runs: number): Promise<Figure> {
  return strReplaceAgainstFloor(
    bench,
    runs,
    bigFile,
    markerFlip(),
    (path) => pythonReadWrite(path, bench.ws, true),
  );
}

/**
 * The editor itself (in this process, no start-up) doing a `str_replace` on a 20 MB file and a
 * `view` of its last 20 lines, each against Python reading and writing the same file: two figures
 * from one interleaved series (str_replace, view, Python, ...).
 */
export async function editorOnBigFile(bench: Bench, runs: number): Promise<[Figure, Figure]> {
  const { path, lines } = await bigFile(bench.ws);
  const tool = new EditTool({
    provider: "anthropic",
    workspace: bench.ws,
    settings: { maxFileBytes: 100_000_000 },
  });
  const flip = markerFlip();
  const timed = (args: () => Record<string, unknown>) => async () => {
    const start = performance.now();
    const result = await tool.execute(args());
    const elapsed = performance.now() - start;
    if (result.error_code !== 0) throw new Error(`${args().command} failed: ${result.error}`);
    return elapsed;
  };
  try {
    const [replace, view] = await interleaved(runs, [
      timed(() => ({ command: "str_replace", path, ...flip() })),
      timed(() => ({ command: "view", path, view_range: [lines - 19, -1] })),
    ], pythonReadWrite(path, bench.ws, false));
    return [
      { id: "str_replace_20mb", ...replace, runs },
      { id: "tail_view_20mb", ...view, runs },
    ];
  } finally {
    await tool.close();
  }
}

// Times each subject and the baseline in turn, `runs` rounds after one warm-up round; medians.
async function interleaved(
  runs: number,
  subjects: (() => Promise<number>)[],
  baseline: () => Promise<number>,
): Promise<{ subject: number; baseline: number; ratio: number }[]> {
  for (const subject of subjects) await subject();
  await baseline();
  const times = subjects.map(() => [] as number[]);
  const base: number[] = [];
  for (let i = 0; i < runs; i++) {
    for (const [k, subject] of subjects.entries()) times[k].push(await subject());
    base.push(await baseline());
  }
  const b = median(base);
  return times.map((t) => ({ subject: median(t), baseline: b, ratio: median(t) / b }));
}

/**
 * A bash `true` through one `deft serve` (default sandbox), request line to reply line, against a
 * fresh `bash -c true` spawned from Deno. `calls` round trips and as many spawns.
 */
export async function serveRoundTrip(bench: Bench, calls: number): Promise<Figure> {
  const child = new Deno.Command(deno, {
    args: bench.deft("serve", "-w", bench.ws),
    cwd: bench.ws,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const replies = replyLines(child.stdout);
  const encoder = new TextEncoder();
  let n = 0;
  const roundTrip = async () => {
    const line = JSON.stringify({ id: ++n, name: "bash", arguments: { command: "true" } }) + "\n";
    const start = performance.now();
    await writer.write(encoder.encode(line));
    const reply = await replies.next();
    const elapsed = performance.now() - start;
    if (reply === null || !reply.includes('"success":true')) {
      throw new Error(`deft serve: unexpected reply: ${reply}`);
    }
    return elapsed;
  };
  const spawn = async () => {
    const start = performance.now();
    const out = await new Deno.Command("bash", {
      args: ["-c", "true"],
      stdout: "null",
      stderr: "null",
    }).output();
    if (!out.success) throw new Error("bash -c true failed");
    return performance.now() - start;
  };
  try {
    // The first call starts the shell; a few more warm the path.
    for (let i = 0; i < 20; i++) await roundTrip();
    // In blocks, not call by call: a spawn between two calls would find serve's threads asleep
    // each time, which a client sending calls one after another does not see.
    const trips: number[] = [];
    const spawns: number[] = [];
    for (let done = 0; done < calls; done += BLOCK) {
      for (let i = 0; i < BLOCK; i++) trips.push(await roundTrip());
      for (let i = 0; i < BLOCK; i++) spawns.push(await spawn());
    }
    const [t, b] = [median(trips), median(spawns)];
    return { id: "serve_round_trip", subject: t, baseline: b, ratio: t / b, runs: trips.length };
  } finally {
    await writer.close().catch(() => {});
    await child.status;
  }
}

/**
 * `deft run --replay` of the demo (examples/demo), against the same five tool calls sent to one
 * `deft serve` in a fresh copy of the repository each time.
 */
export async function demoReplay(bench: Bench, runs: number): Promise<Figure> {
  const demo = `${ROOT}examples/demo`;
  const trajectory = JSON.parse(await Deno.readTextFile(`${demo}/trajectory.json`));
  const recorded: string = trajectory.working_dir;
  let copy = 0;
  const freshRepo = async () => {
    const repo = `${bench.tmp}/demo-${copy++}`;
    await Deno.mkdir(repo);
    for (const entry of Deno.readDirSync(`${demo}/repo`)) {
      await Deno.copyFile(`${demo}/repo/${entry.name}`, `${repo}/${entry.name}`);
    }
    const git = ["-c", "user.name=deft", "-c", "user.email=demo@deft.invalid"];
    for (const args of [["init", "-q"], [...git, "add", "."], [...git, "commit", "-qm", "demo"]]) {
      const out = await new Deno.Command("git", { args, cwd: repo, stdout: "null" }).output();
      if (!out.success) throw new Error(`git ${args.join(" ")} failed`);
    }
    return repo;
  };
  const calls = (repo: string) =>
    (trajectory.agent_steps as { llm_response?: { tool_calls?: unknown[] } }[])
      .flatMap((step) => step.llm_response?.tool_calls ?? [])
      .map((call, i) => {
        const { name, arguments: args } = call as { name: string; arguments: unknown };
        const text = JSON.stringify({ id: i, name, arguments: args }).replaceAll(recorded, repo);
        return text + "\n";
      })
      .join("");
  return await paired(
    "demo_replay",
    runs,
    async () => {
      const repo = await freshRepo();
      return await timeCommand(
        deno,
        bench.deft(
          "run",
          "--replay",
          `${demo}/trajectory.json`,
          "-w",
          repo,
          "-t",
          `${repo}.t.json`,
        ),
        repo,
      );
    },
    async () => {
      const repo = await freshRepo();
      const start = performance.now();
      const child = new Deno.Command(deno, {
        args: bench.deft("serve", "-w", repo),
        cwd: repo,
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(calls(repo)));
      await writer.close();
      const out = await child.output();
      const elapsed = performance.now() - start;
      if (!out.success) throw new Error("deft serve of the demo's calls failed");
      return elapsed;
    },
  );
}

/**
 * Reply lines from `stream`, read as bytes and decoded a line at a time: the client's own cost
 * per round trip stays small next to what it measures.
 */
function replyLines(stream: ReadableStream<Uint8Array>): { next(): Promise<string | null> } {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let pending: Uint8Array = new Uint8Array(0);
  return {
    async next() {
      while (true) {
        const newline = pending.indexOf(10);
        if (newline >= 0) {
          const line = decoder.decode(pending.subarray(0, newline));
          pending = pending.subarray(newline + 1);
          return line;
        }
        const { value, done } = await reader.read();
        if (done) return null;
        if (pending.length === 0) pending = value;
        else {
          const joined = new Uint8Array(pending.length + value.length);
          joined.set(pending);
          joined.set(value, pending.length);
          pending = joined;
        }
      }
    },
  };
}
