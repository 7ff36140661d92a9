/**
 * One sandbox for many git commands. Starting bubblewrap costs far more than the git command it
 * holds (namespaces, a few dozen mounts), and a run's baseline and patch are some twenty short
 * commands. So a session's sandboxed git goes to a small bash loop started once inside ONE bwrap
 * with the view each command would have had: the same `sandboxCommand` options (mode, workspace,
 * the git folders shown read-only), and as writable places only Deft's own folder for that view
 * (where `runnerScratch` makes every temp index and object store of the view) plus any lasting
 * store the caller names (a checkpoint store: a runner of its own).
 *
 * Each command is handed over as a file of NUL-separated fields (folder, stdin file, the whole
 * environment, argv) in the runner's private exchange folder, and a line on the loop's stdin. The
 * loop starts it with exactly that environment and nothing else (`env -i -C folder`), its stdout
 * and stderr two FIFOs that Deft reads within the command's limits, and answers with the
 * command's number and exit status. Past the deadline or a limit, Deft kills the whole sandbox —
 * the command and anything it started die with bwrap's PID namespace — and the next command starts
 * a fresh runner. Commands to one runner go one at a time; a view has up to two runners, so two
 * commands Deft runs side by side run side by side here too.
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
  /** What made Deft stop it, if anything. */
  over?: "deadline" | "stdout" | "stderr";
}

/** The runner stopped answering: the command's outcome is unknown, and the runner is gone. */
export class RunnerLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunnerLostError";
  }
}

// Read one request, run it, answer with its number and exit status. Fields: the folder to start
// in, the stdin file (or /dev/null), the number of environment entries, the entries, then argv.
// stdout and stderr are FIFOs Deft reads (and stops reading past its limits). The loop first
// drops every variable it was started with from its exports (it runs only builtins after
// `mkfifo`), so a subshell that exports the request's entries and `exec`s the command starts it
// with exactly its environment, in its folder (exit 125 when that is not there): one process
// per command. `env -i -C` would be a second program started for each (a few ms each on a
// loaded machine, inside the sandbox's mounts); it is only used for a name `export` refuses.
const LOOP = [
  "io=$1",
  'mkfifo -m 600 -- "$io/out" "$io/err" || exit 1',
  "unset -v $(compgen -e) CDPATH",
  "echo ready",
  "while IFS= read -r n; do",
  "  mapfile -d '' f < \"$io/req\"",
  "  ne=${f[2]}",
  "  (",
  '    cd -P -- "${f[0]}" 2>/dev/null || exit 125',
  '    if export -- "${f[@]:3:ne}" 2>/dev/null; then exec -- "${f[@]:3+ne}"; fi',
  '    exec env -i -- "${f[@]:3:ne}" "${f[@]:3+ne}"',
  '  ) > "$io/out" 2> "$io/err" < "${f[1]}"',
  '  printf \'%s %s\\n\' "$n" "$?"',
  "done",
].join("\n");

/** How long a runner may take to start (bwrap and bash, on a loaded machine). */
const START_MS = 60_000;

interface Runner {
  child: Deno.ChildProcess;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  pending: string;
  io: string;
  dead: boolean;
  queue: Promise<unknown>;
  count: number;
  /** Commands handed to it and not answered yet. */
  busy: number;
}

/** The runners of one view with one set of writable places. */
interface Pool {
  runners: Runner[];
  /** A runner being started (calls that arrive meanwhile share it). */
  starting?: Promise<Runner>;
}

/**
 * At most this many runners serve one view and set of writable places: two commands Deft runs
 * side by side (a listing of changed files and one of new files) then run side by side in the
 * sandbox too. The second starts only when a command finds the first busy, and meanwhile that
 * command waits its turn on the first.
 */
const RUNNERS_PER_POOL = 2;

interface ViewState {
  /** Deft's own folder for this view: scratch folders and the runners' exchange folders. */
  root: string;
  pools: Map<string, Pool>;
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
      state = { root, pools: new Map() };
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
      for (const pool of state.pools.values()) {
        pool.runners.forEach(stop);
        pool.starting?.then(stop, () => {});
      }
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
  let pool = state.pools.get(key);
  if (!pool) state.pools.set(key, pool = { runners: [] });
  // A command waiting its turn on a runner that was stopped meanwhile (the one before it hung)
  // was never sent: it goes to another runner.
  for (let tries = 0;; tries++) {
    const mine = await pick(pool, () => start(view, state, extra));
    const turn = mine.queue.then(() => ask(mine, request));
    mine.queue = turn.catch(() => {});
    try {
      return await turn;
    } catch (e) {
      if (!(e instanceof NotSentError) || tries >= RUNNERS_PER_POOL) throw e;
    } finally {
      mine.busy--;
    }
  }
}

/** The runner had stopped before the command was handed to it: it never ran. */
class NotSentError extends RunnerLostError {
  constructor() {
    super("the sandboxed git runner had stopped");
    this.name = "NotSentError";
  }
}

/**
 * The runner of `pool` a command goes to (counted busy): an idle one; else, while the pool is not full, a new
 * one is started, and the command waits its turn on the least busy runner when that one has
 * a single command in hand (which usually ends before a sandbox starts), else on the new one (the
 * command in hand may be a hung one). Calls that find none share one start (a failed start is
 * tried again next time).
 */
async function pick(pool: Pool, startOne: () => Promise<Runner>): Promise<Runner> {
  pool.runners = pool.runners.filter((r) => !r.dead);
  // Counted busy before this returns: a call right after sees it taken.
  const take = (runner: Runner) => (runner.busy++, runner);
  const idle = pool.runners.find((r) => r.busy === 0);
  if (idle) return take(idle);
  if (!pool.starting && pool.runners.length < RUNNERS_PER_POOL) {
    const starting = startOne();
    pool.starting = starting;
    starting.then((r) => pool.runners.push(r), () => {}).finally(() => {
      if (pool.starting === starting) pool.starting = undefined;
    });
  }
  const least = pool.runners.reduce<Runner | undefined>(
    (a, b) => (a === undefined || b.busy < a.busy ? b : a),
    undefined,
  );
  if (least && (least.busy <= 1 || !pool.starting)) return take(least);
  return take(await pool.starting!);
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
    busy: 0,
  };
  child.status.then(() => runner.dead = true, () => runner.dead = true);
  // The loop says `ready` once its FIFOs are made; bwrap failing to start says why on stderr.
  // The timer also keeps Deft waiting: the runner's own pipes, unref'd, do not.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ready = await Promise.race([
    readLine(runner).catch(() => undefined),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), START_MS);
    }),
  ]);
  clearTimeout(timer);
  if (ready !== "ready") {
    stop(runner);
    throw await lost(runner);
  }
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

async function ask(runner: Runner, request: RunnerRequest): Promise<RunnerAnswer> {
  if (runner.dead) throw new NotSentError();
  const number = String(++runner.count);
  const stdinFile = join(runner.io, "in");
  // Two small files in Deft's own private folder: written synchronously (an awaited write costs
  // each command a turn of the event loop, and a checkpoint is a handful of commands).
  if (request.stdin) Deno.writeFileSync(stdinFile, request.stdin, { mode: 0o600 });
  const env = Object.entries(request.env).map(([k, v]) => `${k}=${v}`);
  Deno.writeFileSync(
    join(runner.io, "req"),
    fields([
      request.cwd,
      request.stdin ? stdinFile : "/dev/null",
      String(env.length),
      ...env,
      ...request.argv,
    ]),
    { mode: 0o600 },
  );
  let over: "deadline" | "stdout" | "stderr" | undefined;
  const streams: FifoReader[] = [];
  // Past the deadline or a limit, the whole sandbox goes (the command, anything it started) and
  // the FIFOs are let go; the next command starts a new runner.
  // The runner's pipes are unref'd: while a stopped runner's ends close, a timer of its own keeps
  // Deft waiting for them (else a Deft with nothing else to do would end with the call unsettled).
  let closing: ReturnType<typeof setTimeout> | undefined;
  const halt = (why: "deadline" | "stdout" | "stderr") => {
    over ??= why;
    closing ??= setTimeout(() => {}, 10_000);
    stop(runner);
    for (const stream of streams) stream.release();
  };
  streams.push(
    fifoReader(join(runner.io, "out"), request.maxOut, () => halt("stdout")),
    fifoReader(join(runner.io, "err"), request.maxErr, () => halt("stderr")),
  );
  const timer = setTimeout(() => halt("deadline"), request.timeoutMs);
  try {
    await runner.writer.write(new TextEncoder().encode(`${number}\n`));
    const [out, err, line] = await Promise.all([
      streams[0].bytes,
      streams[1].bytes,
      readLine(runner).catch(() => undefined),
    ]);
    if (over) return { code: undefined, out, err, over };
    const [answered, status] = (line ?? "").split(" ");
    if (answered !== number) throw new RunnerLostError("no answer");
    return { code: Number(status), out, err };
  } catch (e) {
    if (over) {
      return {
        code: undefined,
        out: new Uint8Array(),
        err: new Uint8Array(),
        over,
      };
    }
    stop(runner);
    for (const stream of streams) stream.release();
    throw e instanceof SandboxUnavailableError ? e : await lost(runner);
  } finally {
    clearTimeout(timer);
    clearTimeout(closing);
    if (request.stdin) await Deno.remove(stdinFile).catch(() => {});
  }
}

/** One of the loop's FIFOs being read. */
interface FifoReader {
  /** What was read when the writer closed it (or it was let go). */
  bytes: Promise<Uint8Array>;
  release(): void;
}

/** Reads a FIFO the loop writes, up to `max` bytes (one more calls `onOver`). */
function fifoReader(path: string, max: number, onOver: () => void): FifoReader {
  let file: Deno.FsFile | undefined;
  let released = false;
  let opened = false;
  const reader = {
    /**
     * Lets go of the FIFO: a read under way ends; an open still waiting for the loop (which will
     * not come) is completed by opening the other end here, which never waits while it is pending.
     */
    release() {
      if (released) return;
      released = true;
      if (!opened) {
        Deno.open(path, { write: true }).then((w) => w.close(), () => {});
      }
      try {
        file?.close();
      } catch { /* closed */ }
    },
    bytes: (async () => {
      const chunks: Uint8Array[] = [];
      let size = 0;
      try {
        file = await Deno.open(path, { read: true });
        opened = true;
        if (released) {
          file.close();
          return new Uint8Array();
        }
        const buffer = new Uint8Array(64 * 1024);
        while (true) {
          const n = await file.read(buffer);
          if (n === null) break;
          if (size + n > max) {
            onOver();
            break;
          }
          chunks.push(buffer.slice(0, n));
          size += n;
        }
      } catch { /* released */ }
      if (!released) {
        released = true;
        try {
          file?.close();
        } catch { /* closed */ }
      }
      const all = new Uint8Array(size);
      let at = 0;
      for (const chunk of chunks) {
        all.set(chunk, at);
        at += chunk.length;
      }
      return all;
    })(),
  };
  return reader;
}

/** The reason a runner stopped: bwrap's own complaint when it made one. */
async function lost(runner: Runner): Promise<Error> {
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
