/**
 * A live session's background shells, published for `deft sessions` in other processes (issue
 * 54: the shells are "listed by /status and `deft sessions`"). The shells live in the tool host;
 * the session asks it for their list (the executor's status look, which reads no output) whenever
 * they may have changed — after a call of a tool that starts, reads or ends them, a cancel, a
 * rewind's take-back — and every few seconds while one runs (one may end on its own), and writes
 * the list to a small file beside the session's trajectory (`<trajectory>.shells`).
 *
 * The session holds an exclusive lock on that file for as long as it lives and rewrites it in
 * place under that lock; it removes the file when its tools close. A file whose lock is free was
 * left by a session that died (SIGKILL): its list is not shown. A reader trusts nothing in the
 * file: it is read as Deft reads its own files (a regular file, bounded), checked against its
 * shape, each value bounded, masked and made inert for a terminal.
 */
import { z } from "zod";
import type { ShellsEvent, ToolExecutor } from "../tools/executor.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalLine } from "../policy/terminal_text.ts";
import { OwnFileError, readOwnText } from "../policy/own_file.ts";

/** One background shell as `deft sessions` shows it. */
export interface PublishedShell {
  id: string;
  /** `running`, `exited (exit code N)` or `killed`. */
  status: string;
  /** When it started (HH:MM:SS, UTC). */
  started: string;
  /** Its command line's first line, cut short, masked. */
  command: string;
}

/** The most shells a board holds, and the longest command line it keeps. */
const MAX_SHELLS = 50;
const MAX_COMMAND_CHARS = 120;
/** The largest board file read: far above 50 shells' lines. */
const MAX_BOARD_BYTES = 64 * 1024;
/** How often the list is asked for again while a shell runs (it may end on its own). */
const POLL_MS = 2000;

/** Where the board of the session recorded in `trajectoryPath` is. */
export function boardPath(trajectoryPath: string): string {
  return `${trajectoryPath}.shells`;
}

/** One line of the tool's list (bash_output's `listShells`): id, status, unread, start, command. */
const LISTED =
  /^(\S+) {2}(running|killed|exited \(exit code [^)]*\)) {2}\d+ bytes unread {2}started (\d\d:\d\d:\d\d) {2}(.*)$/;

/** The shells in the tool's list, one a line; lines of another shape are left out. */
export function parseShellList(text: string): PublishedShell[] {
  return text.split("\n").flatMap((line) => {
    const m = LISTED.exec(line);
    return m ? [{ id: m[1], status: m[2], started: m[3], command: m[4] }] : [];
  }).slice(0, MAX_SHELLS);
}

/** Publishes a session's background shells beside its current trajectory. */
export class ShellBoard {
  readonly #executor: ToolExecutor;
  #path: string | undefined;
  #sessionId = "";
  #file: Deno.FsFile | undefined;
  /** Publishes run one after another; a change meanwhile asks for one more. */
  #chain: Promise<void> = Promise.resolve();
  #queued = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #last = "";

  constructor(executor: ToolExecutor) {
    this.#executor = executor;
    executor.watchShells((event: ShellsEvent) =>
      event === "closed" ? this.close() : this.refresh()
    );
  }

  /** The session now records into `trajectoryPath`: its board moves beside it. */
  moveTo(trajectoryPath: string, sessionId: string): void {
    if (this.#closed || trajectoryPath === this.#path) return;
    this.#enqueue(async () => {
      await this.#remove();
      this.#path = trajectoryPath;
      this.#sessionId = sessionId;
      this.#last = "";
    });
    this.refresh();
  }

  /** Asks the tools for their shells again and publishes them when they changed. */
  refresh(): Promise<void> {
    if (this.#closed) return this.#chain;
    if (this.#queued) return this.#chain;
    this.#queued = true;
    return this.#enqueue(async () => {
      this.#queued = false;
      await this.#publish();
    });
  }

  /** The session ends: the board is removed and its lock let go. */
  async close(): Promise<void> {
    if (this.#closed) return await this.#chain;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#enqueue(() => this.#remove());
  }

  #enqueue(work: () => Promise<void>): Promise<void> {
    this.#chain = this.#chain.then(work).catch(() => {});
    return this.#chain;
  }

  async #publish(): Promise<void> {
    if (this.#closed || this.#path === undefined) return;
    const [report] = await this.#executor.status();
    if (!report || report.result.error_code !== 0 || this.#closed) return;
    const shells = parseShellList(report.result.output ?? "").map((s) => ({
      ...s,
      command: clip(maskOutput(s.command)),
    }));
    clearTimeout(this.#timer);
    if (shells.some((s) => s.status === "running")) {
      const timer = setTimeout(() => void this.refresh(), POLL_MS);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
    if (shells.length === 0 && !this.#file) return;
    const text = JSON.stringify({ deft_shells: 1, session_id: this.#sessionId, shells });
    if (text === this.#last) return;
    this.#file ??= await this.#open(this.#path);
    const bytes = new TextEncoder().encode(text);
    await this.#file.truncate(0);
    await this.#file.seek(0, Deno.SeekMode.Start);
    let written = 0;
    while (written < bytes.length) written += await this.#file.write(bytes.subarray(written));
    this.#last = text;
  }

  /** A new board file (never one found there: that is removed first), locked. */
  async #open(trajectoryPath: string): Promise<Deno.FsFile> {
    const path = boardPath(trajectoryPath);
    await Deno.remove(path).catch(() => {});
    const file = await Deno.open(path, { createNew: true, write: true, read: true, mode: 0o600 });
    try {
      await file.lock(true);
    } catch (e) {
      file.close();
      throw e;
    }
    return file;
  }

  async #remove(): Promise<void> {
    const file = this.#file;
    if (!file || this.#path === undefined) return;
    this.#file = undefined;
    await Deno.remove(boardPath(this.#path)).catch(() => {});
    file.close();
  }
}

const boardShape = z.object({
  deft_shells: z.literal(1),
  session_id: z.string().max(200),
  shells: z.array(z.object({
    id: z.string(),
    status: z.string(),
    started: z.string(),
    command: z.string(),
  })).max(1000),
});

/**
 * The background shells the live session recorded in `trajectoryPath` publishes; empty when
 * there is no board, when the session that wrote it is gone (its lock is free), or when the file
 * is not one Deft wrote. Every value is bounded, masked and inert for a terminal. A board that is
 * there but not a plain file within its bound (a FIFO, a device, a huge file, one swapped while
 * it was read) is skipped at once, never waited on, and `skipped` is told why.
 */
export async function readShellBoard(
  trajectoryPath: string,
  skipped: (why: string) => void = () => {},
): Promise<PublishedShell[]> {
  const path = boardPath(trajectoryPath);
  // A session rewrites its board in place: a read that meets it half-written tries again.
  for (let attempt = 0; attempt < 3; attempt++) {
    let text: string;
    try {
      text = await readOwnText(path, { limit: MAX_BOARD_BYTES, what: "a session's shell list" });
    } catch (e) {
      // None (the usual case), or not a plain file within the bound: nothing to show.
      if (e instanceof OwnFileError) skipped(e.message);
      return [];
    }
    let parsed: z.infer<typeof boardShape>;
    try {
      parsed = boardShape.parse(JSON.parse(text));
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 30));
      continue;
    }
    const held = await heldByLiveSession(path);
    if (typeof held === "string") skipped(held);
    if (held !== true) return [];
    return parsed.shells.slice(0, MAX_SHELLS).flatMap((s) => {
      if (!/^[\w.-]{1,64}$/.test(s.id)) return [];
      return [{
        id: s.id,
        status: clip(terminalLine(s.status), 40),
        started: clip(terminalLine(s.started), 8),
        command: clip(terminalLine(maskOutput(s.command))),
      }];
    });
  }
  return [];
}

/**
 * Whether a live session holds the board's lock (a free lock: its session died); a string says
 * why the board was not looked at. The board may have been swapped for a FIFO since it was read,
 * and Deno's open has no `O_NONBLOCK`: it is opened for reading and writing (never written),
 * which on Linux opens a FIFO at once instead of waiting for a writer, and the lock is tried only
 * when what was opened is a regular file.
 */
async function heldByLiveSession(path: string): Promise<boolean | string> {
  // Looked at before opening: in the usual case only a regular file is opened.
  const info = await Deno.lstat(path).catch(() => undefined);
  if (!info?.isFile) return false;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true, write: true });
  } catch {
    return false;
  }
  try {
    if (!(await file.stat()).isFile) {
      return `${path} is not a regular file; it changed while Deft looked at it`;
    }
    const free = await file.tryLock(false);
    if (free) await file.unlock();
    return !free;
  } catch {
    return false;
  } finally {
    file.close();
  }
}

function clip(text: string, max = MAX_COMMAND_CHARS): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
