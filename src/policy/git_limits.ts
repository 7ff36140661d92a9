/**
 * How long a git command (or a step around it in a place Deft does not control) may run and how
 * much it may print: past either, the child is killed and `GitLimitError` thrown, never taken for
 * git's own answer. Used by policy/git.ts (the host's git), policy/git_container.ts (git inside a
 * container) and the steps of a container's patch place.
 */
import { readEnv } from "../env.ts";
import { type Launch, spawnChild } from "./process.ts";

/** What one git command produced. */
export interface GitResult {
  ok: boolean;
  code: number;
  /** Standard output, decoded (bytes that are not UTF-8 replaced). */
  out: string;
  err: string;
  /** Standard output as git wrote it: paths from `-z` listings are read from here. */
  bytes: Uint8Array;
}

/** How long a git command may run, and how much it may print, before Deft stops it. */
export interface GitLimits {
  /** Milliseconds (default `gitDeadlineMs()`: GIT_DEADLINE_MS unless the environment says). */
  timeoutMs?: number;
  /** Bytes of standard output (default GIT_OUTPUT_LIMIT); standard error is kept to 1 MiB. */
  maxOutputBytes?: number;
}

/**
 * A git command that ends by itself is stopped after this long (five minutes: hashing every file
 * of a very large repository into a fresh private index takes a while).
 */
export const GIT_DEADLINE_MS = 300_000;

/**
 * The deadline in force: GIT_DEADLINE_MS, or `DEFT_GIT_DEADLINE_MS` (milliseconds, a positive
 * whole number) when set — for tests that wait on a stopped git, and for a very slow disk. A
 * value that is not such a number is ignored.
 */
export function gitDeadlineMs(): number {
  const set = readEnv("DEFT_GIT_DEADLINE_MS");
  const ms = set !== undefined && /^\d{1,9}$/.test(set) ? Number(set) : 0;
  return ms > 0 ? ms : GIT_DEADLINE_MS;
}

/** A git command that prints more than this on stdout is stopped (64 MiB). */
export const GIT_OUTPUT_LIMIT = 64 * 1024 * 1024;

/** Standard error past this is cut (1 MiB). */
export const ERROR_OUTPUT_LIMIT = 1024 * 1024;

/**
 * A git command Deft stopped: it ran past its deadline or printed past its limit. Never taken for
 * git's own answer (a repository that is "not a repository", an empty patch).
 */
export class GitLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GitLimitError";
  }
}

/**
 * Feeds `stdin` (if any) to `child`, then collects what it printed and how it ended, within
 * `limits`: past the deadline or the output limit the child is killed and GitLimitError thrown.
 * `what` names the command in that error.
 */
export async function finish(
  child: Deno.ChildProcess,
  what: string,
  stdin: Uint8Array | undefined,
  limits: GitLimits & { noDeadline?: boolean },
): Promise<GitResult> {
  const timeoutMs = limits.timeoutMs ?? gitDeadlineMs();
  const maxOut = limits.maxOutputBytes ?? GIT_OUTPUT_LIMIT;
  let stopped: string | undefined;
  const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
  const stop = (why: string) => {
    if (stopped) return;
    stopped = why;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    // A grandchild may hold the pipes open: stop reading rather than wait for it.
    for (const reader of readers) reader.cancel().catch(() => {});
  };
  const timer = limits.noDeadline && limits.timeoutMs === undefined ? undefined : setTimeout(
    () => stop(`did not finish within ${Math.round(timeoutMs / 100) / 10} s`),
    timeoutMs,
  );
  const collect = async (stream: ReadableStream<Uint8Array>, max: number, name: string) => {
    const reader = stream.getReader();
    readers.push(reader);
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        if (size + value.length > max) {
          stop(`printed more than ${Math.round(max / 1024 / 1024 * 10) / 10} MiB on ${name}`);
          break;
        }
        chunks.push(value);
        size += value.length;
      }
    } catch { /* cancelled */ }
    const all = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    return all;
  };
  const feeding = stdin
    ? (async () => {
      const writer = child.stdin.getWriter();
      await writer.write(stdin).catch(() => {});
      await writer.close().catch(() => {});
    })()
    : Promise.resolve();
  try {
    const [out, err] = await Promise.all([
      collect(child.stdout, maxOut, "stdout"),
      collect(child.stderr, ERROR_OUTPUT_LIMIT, "stderr"),
    ]);
    const status = await child.status;
    await feeding;
    if (stopped) throw limitError(what, stopped);
    const decoder = new TextDecoder();
    return {
      ok: status.success,
      code: status.code,
      out: decoder.decode(out),
      err: decoder.decode(err),
      bytes: out,
    };
  } finally {
    clearTimeout(timer);
  }
}

export function limitError(what: string, stopped: string): GitLimitError {
  return new GitLimitError(
    `${what} ${stopped}: Deft stopped it. A repository (or a program put in git's place) ` +
      "that makes git wait or print without end cannot be diffed; look at the workspace's " +
      "git setup (a FIFO or device where git reads a file, a hostile `git` on PATH).",
  );
}

/**
 * Runs `launch` (built by policy/process.ts, e.g. `containerExecLaunch`) to its end within
 * `limits`, as git is run: past the deadline or the output limit it is killed and GitLimitError
 * thrown, naming it `what`. For the steps around git in a place Deft does not control.
 */
export async function runLimited(
  launch: Launch,
  what: string,
  stdin?: Uint8Array,
  limits: GitLimits = {},
): Promise<GitResult> {
  const child = spawnChild(launch, { stdin: stdin ? "piped" : "null" });
  return await finish(child, what, stdin, limits);
}

/** `git args`, shortened for a message. */
export function describe(args: readonly string[]): string {
  const words = args.filter((a) => a !== "--no-pager");
  const shown = words.slice(0, 4).join(" ");
  return `git ${shown}${words.length > 4 ? " …" : ""}`;
}
