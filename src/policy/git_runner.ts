/**
 * One sandbox for many git commands. Starting bubblewrap costs far more than the git command it
 * holds (namespaces, a few dozen mounts), and a run's baseline and patch are some thirty short
 * commands. So a session's sandboxed git goes to a small bash loop started once inside ONE bwrap
 * with the view each command would have had: the same `sandboxCommand` options (mode, workspace,
 * the git folders shown read-only), and as writable places only Deft's own scratch folder for that
 * view (`scratchRoot`, where every temp index and object store of the view is made) plus any
 * lasting store the caller names (a checkpoint store).
 *
 * Each command is handed over as a file of NUL-separated fields (folder, deadline, limits, the
 * whole environment, argv) in a private exchange folder, and a line on the loop's stdin. The loop
 * starts it with exactly that environment (`env -i`), under coreutils `timeout -s KILL` (its own
 * process group, killed whole at the deadline), its stdout and stderr each cut by `head -c` one
 * byte past their limits (git dies of SIGPIPE there), and answers with a line when it has ended.
 * Deft reads what it printed from the exchange folder and judges the limits as for any git
 * (policy/git.ts). Should the loop itself not answer (a grandchild that left git's process group
 * and holds a pipe), the whole sandbox is killed shortly after the deadline and the next command
 * starts a fresh one. Commands to one runner go one at a time.
 *
 * The runner is unref'd: it never keeps Deft alive, and it dies with Deft (bwrap
 * `--die-with-parent`); its folders go when Deft exits.
 */
import { join } from "node:path";
import { sandboxCommand, type SandboxMode, SandboxUnavailableError } from "./sandbox.ts";
import { spawnChild } from "./spawn.ts";
import { isInside } from "./workspace.ts";
import { readEnv } from "../env.ts";

/** The sandbox view a runner serves: what `sandboxCommand` is given, minus the writable places. */
export interface RunnerView {
  mode: Exclude<SandboxMode, "none">;
  workspace: string;
  readOnlyPaths: readonly string[];
  bwrapPath?: string;
}

/** One command for a runner: where, what, and within which limits. */
export interface RunnerRequest {
  cwd: string;
  /** The whole environment of the command (nothing else is inherited). */
  env: Record<string, string>;
  /** Program and arguments. */
  argv: readonly string[];
  stdin?: Uint8Array;
  timeoutMs: number;
  maxOut: number;
  maxErr: number;
}

/** How a command ended inside a runner. */
export interface RunnerAnswer {
  /** Exit status (128 + n when killed by signal n); undefined when it could not be started. */
  code: number | undefined;
  out: Uint8Array;
  err: Uint8Array;
  /** It was still running at its deadline (and was killed). */
  overran: boolean;
}

/** The runner stopped answering: the command's outcome is unknown, and the runner is gone. */
export class RunnerLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunnerLostError";
  }
}

// Read one request, run it, answer with its number. Fields: cwd, deadline in seconds, stdout and
// stderr limits (+1), stdin file (or /dev/null), the number of environment entries, the entries,
// then argv. `timeout` puts the command in a process group of its own and kills that group.
const LOOP = [
  "io=$1",
  "while IFS= read -r n; do",
  "  mapfile -d '' f < \"$io/req\"",
  "  ne=${f[5]}",
  '  : > "$io/rc"',
  "  (",
  '    cd -- "${f[0]}" 2>/dev/null || { echo 126 > "$io/rc"; exit; }',
  '    { timeout -s KILL "${f[1]}" env -i "${f[@]:6:ne}" "${f[@]:6+ne}" < "${f[4]}" 2>&1 1>&3 3>&- |',
  '        head -c "${f[3]}" > "$io/err"',
  '      echo "${PIPESTATUS[0]}" > "$io/rc"',
  '    } 3>&1 | head -c "${f[2]}" > "$io/out"',
  "  )",
  "  printf '%s\\n' \"$n\"",
  "done",
].join("\n");

/** How long past a command's deadline the runner may take to answer before it is killed. */
const GRACE_MS = 3_000;

interface Runner {
  child: Deno.ChildProcess;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  pending: string;
  io: string;
  dead: boolean;
  queue: Promise<unknown>;
  count: number;
}

interface ViewState {
  /** Deft's own folder for this view: scratch folders and the runners' exchange folders. */
  root: string;
  runners: Map<string, Runner>;
}

const views = new Map<string, ViewState>();
let cleanupInstalled = false;

function viewKey(view: RunnerView): string {
  return JSON.stringify([
    view.mode,
    view.workspace,
    [...view.readOnlyPaths].sort(),
    view.bwrapPath ?? "",
  ]);
}

async function viewState(view: RunnerView): Promise<ViewState> {
  const key = viewKey(view);
  let state = views.get(key);
  if (!state) {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-git-" }));
    await Deno.chmod(root, 0o700);
    // Another call may have made one meanwhile: keep the first.
    state = views.get(key);
    if (state) await Deno.remove(root, { recursive: true }).catch(() => {});
    else {
      state = { root, runners: new Map() };
      views.set(key, state);
      installCleanup();
    }
  }
  return state;
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  globalThis.addEventListener("unload", () => {
    for (const state of views.values()) {
      for (const runner of state.runners.values()) stop(runner);
      try {
        Deno.removeSync(state.root, { recursive: true });
      } catch { /* already gone */ }
    }
    views.clear();
  });
}

/**
 * A new private folder (mode 0700, with an empty `objects/`) inside the view's own folder: every
 * git command of the view may write it, with no sandbox of its own to start.
 */
export async function runnerScratch(view: RunnerView, kind: string): Promise<string> {
  const { root } = await viewState(view);
  const folder = await Deno.makeTempDir({ dir: root, prefix: `${kind}-` });
  await Deno.mkdir(join(folder, "objects"));
  return folder;
}

/**
 * Runs `request` through the view's runner that may write `writable` (paths inside the view's
 * folder need nothing; others, such as a checkpoint store, get a runner of their own). Throws
 * `SandboxUnavailableError` when the sandbox cannot start, `RunnerLostError` when the runner
 * stopped answering (it is killed; the next call starts another).
 */
export async function runInRunner(
  view: RunnerView,
  writable: readonly string[],
  request: RunnerRequest,
): Promise<RunnerAnswer> {
  const state = await viewState(view);
  const extra = [...new Set(writable.filter((p) => !isInside(state.root, p)))].sort();
  const key = JSON.stringify(extra);
  let runner = state.runners.get(key);
  if (!runner || runner.dead) {
    runner = await start(view, state, extra);
    state.runners.set(key, runner);
  }
  const mine = runner;
  const turn = mine.queue.then(() => ask(mine, view, request));
  mine.queue = turn.catch(() => {});
  return await turn;
}

async function start(
  view: RunnerView,
  state: ViewState,
  extra: readonly string[],
): Promise<Runner> {
  const io = await Deno.makeTempDir({ dir: state.root, prefix: "io-" });
  const { program, args } = sandboxCommand(
    ["bash", "--noprofile", "--norc", "-c", LOOP, "deft-git-runner", io],
    {
      mode: view.mode,
      workspace: view.workspace,
      cwd: view.workspace,
      readOnlyPaths: view.readOnlyPaths,
      writablePaths: [state.root, ...extra],
      bwrapPath: view.bwrapPath,
    },
  );
  // The loop itself needs only PATH (coreutils, bash); each command gets its own environment.
  const env = { PATH: readEnv("PATH") ?? "/usr/local/bin:/usr/bin:/bin" };
  let child: Deno.ChildProcess;
  try {
    child = spawnChild({ program, args, env, cwd: view.workspace }, {
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new SandboxUnavailableError(
        `The sandbox could not start git: ${program} was not found. Install bubblewrap, or run ` +
          "with --sandbox none.",
      );
    }
    throw e;
  }
  child.unref();
  const runner: Runner = {
    child,
    writer: child.stdin.getWriter(),
    reader: child.stdout.getReader(),
    pending: "",
    io,
    dead: false,
    queue: Promise.resolve(),
    count: 0,
  };
  child.status.then(() => runner.dead = true, () => runner.dead = true);
  return runner;
}

function stop(runner: Runner): void {
  runner.dead = true;
  try {
    runner.child.kill("SIGKILL");
  } catch { /* already gone */ }
}

/** NUL-separated fields, as the loop reads them with `mapfile -d ''`. */
function fields(values: readonly string[]): Uint8Array {
  for (const value of values) {
    if (value.includes("\0")) throw new TypeError("a git argument or variable holds a NUL byte");
  }
  return new TextEncoder().encode(values.map((v) => `${v}\0`).join(""));
}

async function ask(
  runner: Runner,
  view: RunnerView,
  request: RunnerRequest,
): Promise<RunnerAnswer> {
  if (runner.dead) throw new RunnerLostError("the sandboxed git runner had stopped");
  const number = String(++runner.count);
  const stdinFile = join(runner.io, "in");
  if (request.stdin) await Deno.writeFile(stdinFile, request.stdin, { mode: 0o600 });
  const env = Object.entries(request.env).map(([k, v]) => `${k}=${v}`);
  await Deno.writeFile(
    join(runner.io, "req"),
    fields([
      request.cwd,
      String(Math.max(request.timeoutMs, 1) / 1000),
      String(request.maxOut + 1),
      String(request.maxErr + 1),
      request.stdin ? stdinFile : "/dev/null",
      String(env.length),
      ...env,
      ...request.argv,
    ]),
    { mode: 0o600 },
  );
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overdue = new Promise<"overdue">((resolve) => {
    timer = setTimeout(() => resolve("overdue"), request.timeoutMs + GRACE_MS);
  });
  try {
    await runner.writer.write(new TextEncoder().encode(`${number}\n`));
    const answer = await Promise.race([readLine(runner), overdue]);
    if (answer === "overdue") {
      stop(runner);
      return { code: undefined, out: new Uint8Array(), err: new Uint8Array(), overran: true };
    }
    if (answer !== number) {
      stop(runner);
      throw await lost(runner, view);
    }
  } catch (e) {
    if (e instanceof RunnerLostError || e instanceof SandboxUnavailableError) throw e;
    stop(runner);
    throw await lost(runner, view);
  } finally {
    clearTimeout(timer);
  }
  const elapsed = performance.now() - started;
  const rc = await Deno.readTextFile(join(runner.io, "rc")).catch(() => "");
  const code = rc.trim() === "" ? undefined : Number(rc.trim());
  const [out, err] = await Promise.all([
    readRegular(join(runner.io, "out")),
    readRegular(join(runner.io, "err")),
  ]);
  if (request.stdin) await Deno.remove(stdinFile).catch(() => {});
  // `timeout -s KILL` kills its own group too: it ends as 137, and only at the deadline.
  const overran = code === 137 && elapsed >= request.timeoutMs * 0.95;
  return { code, out, err, overran };
}

/** The reason a runner stopped: bwrap's own complaint when it made one. */
async function lost(runner: Runner, _view: RunnerView): Promise<Error> {
  const text = await Promise.race([
    new Response(runner.child.stderr).text().catch(() => ""),
    new Promise<string>((resolve) => setTimeout(() => resolve(""), 1_000)),
  ]);
  if (text.startsWith("bwrap: ")) {
    return new SandboxUnavailableError(`The sandbox could not start git: ${text.trim()}`);
  }
  return new RunnerLostError(
    "the sandboxed git runner stopped before answering" + (text ? `: ${text.trim()}` : ""),
  );
}

async function readLine(runner: Runner): Promise<string> {
  while (true) {
    const newline = runner.pending.indexOf("\n");
    if (newline >= 0) {
      const line = runner.pending.slice(0, newline);
      runner.pending = runner.pending.slice(newline + 1);
      return line;
    }
    const { value, done } = await runner.reader.read();
    if (done) throw new RunnerLostError("the sandboxed git runner ended");
    runner.pending += new TextDecoder().decode(value);
  }
}

/** A file the loop wrote, read only when it is a regular file. */
async function readRegular(path: string): Promise<Uint8Array> {
  const info = await Deno.lstat(path).catch(() => undefined);
  if (!info?.isFile) return new Uint8Array();
  return await Deno.readFile(path);
}
