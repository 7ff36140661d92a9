/**
 * The one way Deft reads a file for itself: a config file, a trajectory, project instructions, a
 * task file, an image, a file named in a prompt. A model or a repository may have put a symlink to
 * `/dev/zero`, a FIFO that never ends, a device or a huge file where Deft looks, or swap one in
 * while Deft looks. Only a regular file is read (a link is judged by where it leads); it is looked
 * at before it is opened, opened without waiting (`O_NONBLOCK`: a FIFO swapped in after the look
 * opens at once instead of waiting for a writer) and looked at again once open; never more than the
 * limit is read, even from a file that grows meanwhile.
 *
 * `node:fs` gives the open flags Deno's own `open` lacks; it is loaded only when a file is read,
 * so a start that reads none (the help, a one-off tool call without a config file) does not pay
 * for it.
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
  const { open } = await import("node:fs/promises");
  const { constants } = await import("node:fs");
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw denoError(e, path);
  }
  try {
    const info = await handle.stat();
    // Again on what was opened: the path may have been swapped since the first look.
    check(path, {
      isFile: info.isFile(),
      isDirectory: info.isDirectory(),
      isFifo: info.isFIFO(),
      isCharDevice: info.isCharacterDevice(),
      isBlockDevice: info.isBlockDevice(),
      isSocket: info.isSocket(),
      size: info.size,
    }, options);
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
      const { bytesRead } = await handle.read(buffer, size, buffer.length - size, null);
      if (bytesRead === 0) break;
      size += bytesRead;
    }
    if (size <= limit) return { bytes: buffer.subarray(0, size), cut: false };
    if (options.cut) return { bytes: buffer.subarray(0, limit), cut: true };
    throw tooLarge(path, options);
  } finally {
    await handle.close();
  }
}

/** `readOwnFile` as text; bytes that are not UTF-8 become U+FFFD. */
export async function readOwnText(path: string, options: OwnFileOptions): Promise<string> {
  return new TextDecoder().decode((await readOwnFile(path, options)).bytes);
}

type Kind = Pick<
  Deno.FileInfo,
  "isFile" | "isDirectory" | "isFifo" | "isCharDevice" | "isBlockDevice" | "isSocket" | "size"
>;

function check(path: string, info: Kind, options: OwnFileOptions): void {
  if (!info.isFile) {
    throw new OwnFileError(
      `${path} is ${kindOf(info)}, not a regular file; ${options.what} is read only from a ` +
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
