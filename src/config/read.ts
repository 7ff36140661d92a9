/**
 * Reads a config file with its size bounded before the read starts. A config file may belong to
 * a repository (`./deft.yaml`), so it may be a symlink to `/dev/zero`, a FIFO that never ends or a
 * gigabyte of text: only a regular file of at most MAX_CONFIG_BYTES is read, and never more than
 * that many bytes even if it grows while being read.
 */
import { ConfigError } from "./errors.ts";

/** Largest config file read: far above any real one, small enough to load in well under a second. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The text of the config file at `path`. Errors from finding it (`NotFound`, `NotCapable`) pass
 * through for the caller to judge; anything that is not a regular file within the limit is a
 * ConfigError naming the file.
 */
export async function readConfigFile(path: string, limit = MAX_CONFIG_BYTES): Promise<string> {
  // stat follows symlinks: a link to /dev/zero is judged as the device it leads to. Checking
  // before opening matters for a FIFO, whose open would wait for a writer forever.
  checkKind(path, await Deno.stat(path), limit);
  const file = await Deno.open(path, { read: true });
  try {
    // Again on the opened file: the path may have been swapped since the first look.
    checkKind(path, await file.stat(), limit);
    const bytes = await readAtMost(file, limit + 1);
    if (bytes.length > limit) throw tooLarge(path, limit);
    return new TextDecoder().decode(bytes);
  } finally {
    file.close();
  }
}

/** The first `count` bytes of `file` (fewer at its end): never more is read. */
export async function readAtMost(file: Deno.FsFile, count: number): Promise<Uint8Array> {
  const buffer = new Uint8Array(count);
  let size = 0;
  while (size < buffer.length) {
    const n = await file.read(buffer.subarray(size));
    if (n === null) break;
    size += n;
  }
  return buffer.subarray(0, size);
}

function checkKind(path: string, info: Deno.FileInfo, limit: number): void {
  if (!info.isFile) {
    throw new ConfigError(
      `${path} is ${kindOf(info)}, not a regular file; a config file must be a plain YAML ` +
        `file. Replace it with one, or remove it.`,
    );
  }
  if (info.size > limit) throw tooLarge(path, limit, info.size);
}

function kindOf(info: Deno.FileInfo): string {
  if (info.isDirectory) return "a folder";
  if (info.isFifo) return "a FIFO (named pipe)";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  return "not a file";
}

function tooLarge(path: string, limit: number, size?: number): ConfigError {
  const is = size === undefined ? "is" : `is ${size} bytes,`;
  return new ConfigError(
    `${path}: the config file ${is} over the limit of ${limit} bytes; a configuration is a ` +
      `few kilobytes (see config.example.yaml).`,
  );
}
