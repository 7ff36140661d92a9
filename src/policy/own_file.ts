/**
 * The one way Deft reads a file for itself: a config file, a trajectory, project instructions, a
 * task file, an image, a file named in a prompt. A model or a repository may have put a symlink to
 * `/dev/zero`, a FIFO that never ends, a device or a huge file where Deft looks, or swap one in
 * while Deft looks. Only a regular file is read (a link is judged by where it leads); it is looked
 * at before it is opened, opened without waiting (`O_NONBLOCK`: a FIFO swapped in after the look
 * opens at once instead of waiting for a writer) and looked at again once open; never more than the
 * limit is read, even from a file that grows meanwhile.
 *
 * `node:fs` gives the open flag Deno's own `open` lacks; it is loaded only when a file is read
 * (the commands that read such files have most often loaded it already, with their command line's
 * parser); a config file read at start does without it (see `atStart`).
 */

/** A file Deft reads for itself is not a regular file, or is over its limit. */
export class OwnFileError extends Error {
  override name = "OwnFileError";
}

/** How one kind of file is read. */
export interface OwnFileOptions {
  /** The most bytes read. */
  limit: number;
  /** What the file is, for messages: "a config file", "a trajectory". */
  what: string;
  /** What the user can do about a refused file, the end of the message. */
  hint?: string;
  /** A file over the limit is cut at it (its start is still useful) instead of refused. */
  cut?: boolean;
  /**
   * Read at start, before anything of the model's can run (a config file): opened with Deno's own
   * open, sparing the pipeline commands (`deft tool`, `deft serve`) the tens of milliseconds
   * `node:fs` takes to load. What is not a regular file is still refused by the look before the
   * open; only a FIFO swapped in between the look and the open would make it wait, and at start
   * nothing is left running to swap one (the model's processes die with the session that started
   * them, in their PID namespace).
   */
  atStart?: boolean;
}

/** What was read. */
export interface OwnFile {
  bytes: Uint8Array;
  /** True when the file went on past `limit` and `cut` was asked for. */
  cut: boolean;
}

/**
 * Reads the regular file at `path`, at most `options.limit` bytes. Errors from finding it
 * (`Deno.errors.NotFound`, `NotCapable`, `PermissionDenied`) pass through for the caller to
 * judge; a path that is not a regular file, or one over the limit (unless `cut`), is an
 * `OwnFileError` naming it, what it is and what to do.
 *
 * @example
 * ```ts
 * const { bytes } = await readOwnFile("deft.yaml", { limit: 1 << 20, what: "a config file" });
 * ```
 */
export async function readOwnFile(path: string, options: OwnFileOptions): Promise<OwnFile> {
  // stat follows links: a link to /dev/zero is judged as the device it leads to. Looking before
  // opening keeps the usual case from opening a device at all.
  check(path, await Deno.stat(path), options);
  const file = options.atStart ? await denoFile(path) : await openWithoutWaiting(path);
  try {
    // Again on what was opened: the path may have been swapped since the first look.
    const info = await file.stat();
    check(path, info, options, " (it changed after the first look)");
    const limit = options.limit;
    let buffer = new Uint8Array(Math.min(info.size, limit) + 1);
    let size = 0;
    for (;;) {
      if (size === buffer.length) {
        if (size > limit) break;
        // It grew since it was looked at: read on, never past one byte over the limit.
        const larger = new Uint8Array(Math.min(limit + 1, buffer.length * 2));
        larger.set(buffer);
        buffer = larger;
      }
      const n = await file.read(buffer.subarray(size));
      if (n === null || n === 0) break;
      size += n;
    }
    if (size <= limit) return { bytes: buffer.subarray(0, size), cut: false };
    if (options.cut) return { bytes: buffer.subarray(0, limit), cut: true };
    throw tooLarge(path, options);
  } finally {
    await file.close();
  }
}

/** An open file as `readOwnFile` reads it. */
interface OpenFile {
  stat(): Promise<Kind>;
  read(buffer: Uint8Array): Promise<number | null>;
  close(): Promise<void>;
}

async function denoFile(path: string): Promise<OpenFile> {
  const file = await Deno.open(path, { read: true });
  return {
    stat: () => file.stat(),
    read: (buffer) => file.read(buffer),
    close: () => Promise.resolve(file.close()),
  };
}

/**
 * Opens `path` for reading with `O_NONBLOCK`, which Deno's own open lacks: a FIFO swapped in
 * after the look opens at once instead of waiting for a writer that never comes, and is refused
 * by its type. On a regular file the flag changes nothing.
 */
async function openWithoutWaiting(path: string): Promise<OpenFile> {
  const { open } = await import("node:fs/promises");
  const { constants } = await import("node:fs");
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw denoError(e, path);
  }
  return {
    stat: async () => {
      const info = await handle.stat();
      return {
        isFile: info.isFile(),
        isDirectory: info.isDirectory(),
        isFifo: info.isFIFO(),
        isCharDevice: info.isCharacterDevice(),
        isBlockDevice: info.isBlockDevice(),
        isSocket: info.isSocket(),
        size: info.size,
      };
    },
    read: async (buffer) => {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      return bytesRead === 0 ? null : bytesRead;
    },
    close: () => handle.close(),
  };
}

/** `readOwnFile` as text; bytes that are not UTF-8 become U+FFFD. */
export async function readOwnText(path: string, options: OwnFileOptions): Promise<string> {
  return new TextDecoder().decode((await readOwnFile(path, options)).bytes);
}

type Kind = Pick<
  Deno.FileInfo,
  "isFile" | "isDirectory" | "isFifo" | "isCharDevice" | "isBlockDevice" | "isSocket" | "size"
>;

function check(path: string, info: Kind, options: OwnFileOptions, when = ""): void {
  if (!info.isFile) {
    throw new OwnFileError(
      `${path} is ${
        kindOf(info)
      }${when}, not a regular file; ${options.what} is read only from a ` +
        `plain file.${options.hint ? ` ${options.hint}` : ""}`,
    );
  }
  if (info.size > options.limit && !options.cut) throw tooLarge(path, options, info.size);
}

function kindOf(info: Kind): string {
  if (info.isDirectory) return "a folder";
  if (info.isFifo) return "a FIFO (named pipe)";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  return "not a file";
}

function tooLarge(path: string, options: OwnFileOptions, size?: number): OwnFileError {
  const is = size === undefined ? "is" : `is ${size} bytes,`;
  return new OwnFileError(
    `${path}: ${options.what} ${is} over the limit of ${options.limit} bytes.` +
      (options.hint ? ` ${options.hint}` : ""),
  );
}

/** Node's error for an open that failed after the look, as the Deno error callers expect. */
function denoError(e: unknown, path: string): unknown {
  const code = (e as { code?: string }).code;
  const message = `${(e as Error).message ?? e}`;
  if (code === "ENOENT" || code === "ENOTDIR") return new Deno.errors.NotFound(message);
  if (code === "EACCES" || code === "EPERM") return new Deno.errors.PermissionDenied(message);
  if (code === "ENXIO") {
    // A socket (or a FIFO's other end) swapped in after the look.
    return new OwnFileError(`${path} is not a regular file; it changed while Deft opened it.`);
  }
  return e;
}
