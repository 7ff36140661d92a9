/**
 * Start-up on the pipeline path: `deft tool task_done '{}'` and `deft tools --json`, from source
 * and from the bundle, against `deno run` of a hello-world measured in the same run, with the
 * same permission flags as the `deft` task.
 *
 * Deno pays for every byte of a main module before running it, even bytes in a comment, and the
 * bundle must carry the grammars and SDKs. So the run also times the bundle's floor: the same
 * hello-world padded with a comment to the bundle's size. `DEFT_BENCH_OTHER_BUNDLE=PATH` adds
 * another bundle (say, one built before a change) to the same interleaved runs.
 *
 * And `deft interactive` from launch to its `deft> ` prompt on a real pseudo-terminal (python3's
 * pty module, as tests/helpers/pty_drive.py drives it), in a small git repository, against `deft
 * tool task_done` in the same run, interleaved, in CPU time and in wall time (target: <= 2x,
 * issue 51), with where its time goes: Deft's own trace (`DEFT_START_TRACE=1`: when its modules
 * were loaded, its configuration checked, its prompt drawn, in ms since the process began; the
 * session is assembled after the prompt) and hello-world for Deno's own start.
 */
import { bundle as buildBundle } from "../scripts/bundle.ts";
import { deftFlags } from "../scripts/deft_flags.ts";
import { median, ms, timeCommand } from "./timing.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const RUNS = 15;
/** The ratio issue 51 asks of launch-to-prompt over `deft tool task_done`. */
const PROMPT_TARGET = 2;

/**
 * Starts argv in a pseudo-terminal and prints the milliseconds until `deft> ` shows (-1: never,
 * within 60 s) with the CPU time the process (and the children it waited for) had used by then,
 * and the start trace line if one was written; then ends the session with Ctrl-D and waits for
 * it (SIGKILL past 20 s).
 */
const PROMPT_TIMER = `
import os, pty, select, signal, sys, time
start = time.monotonic()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out, shown, cpu = b"", -1.0, -1.0
while shown < 0 and time.monotonic() - start < 60:
    if not select.select([fd], [], [], 0.5)[0]:
        continue
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if b"deft> " in out:
        shown = (time.monotonic() - start) * 1000
        with open(f"/proc/{pid}/stat") as stat:
            ticks = stat.read().rsplit(")", 1)[1].split()[11:15]
        cpu = sum(int(t) for t in ticks) * 1000 / os.sysconf("SC_CLK_TCK")
if shown >= 0:
    os.write(fd, b"\x04")
end, gone = time.monotonic() + 20, False
while not gone and time.monotonic() < end:
    gone = os.waitpid(pid, os.WNOHANG)[0] != 0
    try:
        if not gone and select.select([fd], [], [], 0.2)[0]:
            os.read(fd, 65536)
    except OSError:
        pass
if not gone:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
trace = [l for l in out.decode(errors="replace").splitlines() if l.startswith("start: ")]
print(shown, cpu)
print(trace[0] if trace else "")
`;

/** Runs argv to its end and prints its wall and CPU milliseconds (user + system, children too). */
const CPU_TIMER = `
import os, sys, time
start = time.monotonic()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
if status != 0:
    sys.exit(f"{sys.argv[1:]} failed: {status}")
print((time.monotonic() - start) * 1000, (usage.ru_utime + usage.ru_stime) * 1000)
`;

/** Wall and CPU milliseconds of one run of `argv` (run by python3, to read its CPU time). */
async function cpuRun(argv: string[], cwd: string): Promise<{ wall: number; cpu: number }> {
  const out = await new Deno.Command("python3", {
    args: ["-c", CPU_TIMER, ...argv],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  const [wall, cpu] = new TextDecoder().decode(out.stdout).trim().split(" ").map(Number);
  return { wall, cpu };
}

/**
 * Milliseconds from launching `argv` in a pty to its `deft> ` prompt, and the phases of Deft's
 * start trace when `env` asks for one.
 */
async function promptRun(argv: string[], cwd: string, env: Record<string, string>) {
  const out = await new Deno.Command("python3", {
    args: ["-c", PROMPT_TIMER, ...argv],
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const [first, trace = ""] = new TextDecoder().decode(out.stdout).split("\n");
  const [shown, cpu] = first.trim().split(" ").map(Number);
  if (!out.success || !(shown >= 0)) {
    throw new Error(`no deft> prompt: ${new TextDecoder().decode(out.stderr)}`);
  }
  const phases = Object.fromEntries(
    [...trace.matchAll(/(\w+) (\d+)/g)].map(([, name, at]) => [name, Number(at)]),
  );
  return { shown, cpu, phases };
}

/**
 * Where the start's time goes, median of `runs` traced starts: Deno's own start (hello-world),
 * then Deft's phases as its trace names them (`loaded`: the prompt's modules; `checked`: the
 * configuration read and checked; `prompt`: drawn — the session is assembled after it).
 */
async function promptBreakdown(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  runs: number,
  hello: number,
): Promise<string> {
  const seen: Record<string, number[]> = {};
  for (let i = 0; i < runs; i++) {
    const { phases } = await promptRun(argv, cwd, { ...env, DEFT_START_TRACE: "1" });
    for (const [name, at] of Object.entries(phases)) (seen[name] ??= []).push(at);
  }
  let before = 0;
  const steps = Object.entries(seen).map(([name, at]) => {
    const m = median(at);
    const step = before === 0 ? `${name} at ${m} ms` : `${name} ${m - before} ms later`;
    before = m;
    return step;
  });
  return `startup: where the prompt's time goes (median of ${runs} traced starts, since the ` +
    `process began; a whole hello-world run: ${ms(hello)}): ${steps.join(", ")}`;
}

/** A small committed repository (the session records its state) and a HOME of its own. */
async function promptPlace(tmp: string): Promise<{ repo: string; env: Record<string, string> }> {
  const repo = `${tmp}/repo`;
  await Deno.mkdir(repo);
  await Deno.writeTextFile(`${repo}/calc.py`, "def add(a, b):\n    return a - b\n");
  const git = (...args: string[]) =>
    new Deno.Command("git", {
      args: ["-c", "user.name=b", "-c", "user.email=b@b", ...args],
      cwd: repo,
    })
      .output();
  await git("init", "-q");
  await git("add", "-A");
  await git("commit", "-qm", "base");
  const home = `${tmp}/home`;
  await Deno.mkdir(home);
  return {
    repo,
    env: { HOME: home, XDG_STATE_HOME: `${home}/state`, NO_COLOR: "1", TERM: "xterm" },
  };
}

export default async function startupBench(): Promise<void> {
  const deno = Deno.execPath();
  const flags = deftFlags();
  const tmp = await Deno.makeTempDir({ prefix: "deft-bench-" });
  try {
    const hello = `${tmp}/hello.ts`;
    await Deno.writeTextFile(hello, 'console.log("hello");\n');
    const bundle = `${tmp}/deft.js`;
    const padded = `${tmp}/hello-padded.js`;
    let size = 0;
    try {
      size = await buildBundle(bundle);
      const filler = "x".repeat(Math.max(0, size - 40));
      await Deno.writeTextFile(padded, `console.log("hello");\n/*${filler}*/\n`);
    } catch (e) {
      console.log(`startup: bundling failed (${e instanceof Error ? e.message : e})`);
    }
    const hasBundle = size > 0;
    const cases: Record<string, string[]> = {
      "hello-world": ["run", ...flags, hello],
      "deft tool task_done": ["run", ...flags, `${ROOT}main.ts`, "tool", "task_done", "{}"],
      "deft tools --json": ["run", ...flags, `${ROOT}main.ts`, "tools", "--json"],
    };
    if (hasBundle) {
      cases["hello-world padded to the bundle's size"] = ["run", ...flags, padded];
      cases["bundle tool task_done"] = ["run", ...flags, bundle, "tool", "task_done", "{}"];
      cases["bundle tools --json"] = ["run", ...flags, bundle, "tools", "--json"];
    }
    // Another build to set beside this one in the same run (an older bundle, before a change).
    const other = Deno.env.get("DEFT_BENCH_OTHER_BUNDLE");
    if (other) {
      cases["other bundle tool task_done"] = ["run", ...flags, other, "tool", "task_done", "{}"];
      cases["other bundle tools --json"] = ["run", ...flags, other, "tools", "--json"];
    }
    const place = await promptPlace(tmp);
    // No model is asked before the prompt: the address is never called.
    const interactive = [deno, "run", ...flags, `${ROOT}main.ts`, "interactive", "-w", place.repo]
      .concat([
        "-p",
        "openai_compatible",
        "-m",
        "bench",
        "--model-base-url",
        "http://127.0.0.1:9/v1",
      ])
      .concat(["-k", "k"]);
    const times: Record<string, number[]> = {};
    for (const args of Object.values(cases)) await timeCommand(deno, args, tmp); // warm caches
    await promptRun(interactive, place.repo, place.env);
    const taskDoneArgv = [deno, ...cases["deft tool task_done"]];
    for (let i = 0; i < RUNS; i++) {
      for (const [name, args] of Object.entries(cases)) {
        (times[name] ??= []).push(await timeCommand(deno, args, tmp));
      }
      // Interleaved, CPU and wall: the prompt, and task_done run the same way.
      const prompt = await promptRun(interactive, place.repo, place.env);
      const taskDone = await cpuRun(taskDoneArgv, tmp);
      (times.prompt ??= []).push(prompt.shown);
      (times.promptCpu ??= []).push(prompt.cpu);
      (times.taskDoneWall ??= []).push(taskDone.wall);
      (times.taskDoneCpu ??= []).push(taskDone.cpu);
    }
    const base = median(times["hello-world"]);
    console.log(`startup: hello-world ${ms(base)} (median of ${RUNS}, same flags)`);
    console.log(await promptBreakdown(interactive, place.repo, place.env, 5, base));
    const ratio = (a: string, b: string) => median(times[a]) / median(times[b]);
    const wall = ratio("prompt", "taskDoneWall");
    const cpu = ratio("promptCpu", "taskDoneCpu");
    console.log(
      `startup: deft interactive to its deft> prompt (pty) ${ms(median(times.prompt))} wall, ` +
        `${ms(median(times.promptCpu))} CPU; deft tool task_done ${
          ms(median(times.taskDoneWall))
        } wall, ${ms(median(times.taskDoneCpu))} CPU; ratio CPU ${cpu.toFixed(2)}, wall ` +
        `${wall.toFixed(2)} (target <= ${PROMPT_TARGET})` +
        (Math.max(cpu, wall) <= PROMPT_TARGET ? "" : " MISSED"),
    );
    for (const name of Object.keys(cases).slice(1)) {
      const m = median(times[name]);
      const floor = name.startsWith("hello-world padded");
      console.log(
        `startup: ${name} ${ms(m)}; ratio ${(m / base).toFixed(2)}` +
          (floor ? " (the floor for any one-file Deft)" : " (target <= 1.6)"),
      );
    }
    if (hasBundle) {
      console.log(`startup: bundle size ${(size / 1024 / 1024).toFixed(2)} MiB`);
      const over = (name: string, floor: string) => median(times[name]) - median(times[floor]);
      const padded = "hello-world padded to the bundle's size";
      console.log(
        `startup: above its floor the bundle takes ${ms(over("bundle tool task_done", padded))} ` +
          `(tool task_done) and ${ms(over("bundle tools --json", padded))} (tools --json); the ` +
          `source path takes ${ms(over("deft tool task_done", "hello-world"))} and ` +
          `${ms(over("deft tools --json", "hello-world"))} above hello-world`,
      );
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

if (import.meta.main) await startupBench();
