/**
 * Reads a Claude Code settings file for `deft hooks import`. The file usually belongs to a
 * repository (`.claude/settings.json`), so it may be a link to `/dev/zero`, a FIFO no one writes,
 * a device or a gigabyte of JSON: only a regular file of at most `MAX_SETTINGS_BYTES` is read,
 * never more than that many bytes even if it grows meanwhile, and the open itself never waits (a
 * FIFO swapped in after the first look would make a plain open wait for a writer forever: the
 * file is opened with `O_NONBLOCK` and refused by its type).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** Largest settings file read: far above any real one (Claude Code's are a few kilobytes). */
export const MAX_SETTINGS_BYTES = 1024 * 1024;

/** A settings file that cannot be read as one; the message says what it is and what to do. */
export class SettingsFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettingsFileError";
  }
}

/** The text of the settings file at `path`. Throws SettingsFileError. */
export function readSettingsFile(path: string, limit = MAX_SETTINGS_BYTES): string {
  // stat follows links: a link to /dev/zero is judged as the device it leads to.
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (e) {
    throw new SettingsFileError(`cannot read ${path}: ${(e as Error).message}`);
  }
  checkKind(path, kindOf(info), info.size, limit);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new SettingsFileError(`cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    // Again on the opened file: the path may have been swapped since the first look.
    const opened = fstatSync(fd);
    const kind = opened.isFile()
      ? undefined
      : opened.isFIFO()
      ? "a FIFO (named pipe)"
      : opened.isDirectory()
      ? "a folder"
      : opened.isCharacterDevice() || opened.isBlockDevice()
      ? "a device"
      : "not a file";
    checkKind(path, kind, opened.size, limit, " (it changed after the first look)");
    const buffer = new Uint8Array(limit + 1);
    let size = 0;
    while (size < buffer.length) {
      const n = readSync(fd, buffer, size, buffer.length - size, null);
      if (n === 0) break;
      size += n;
    }
    if (size > limit) throw tooLarge(path, limit);
    return new TextDecoder().decode(buffer.subarray(0, size));
  } finally {
    closeSync(fd);
  }
}

function kindOf(info: Deno.FileInfo): string | undefined {
  if (info.isFile) return undefined;
  if (info.isDirectory) return "a folder";
  if (info.isFifo) return "a FIFO (named pipe)";
  if (info.isCharDevice || info.isBlockDevice) return "a device";
  return "not a file";
}

function checkKind(
  path: string,
  kind: string | undefined,
  size: number,
  limit: number,
  when = "",
): void {
  if (kind !== undefined) {
    throw new SettingsFileError(
      `${path} is ${kind}${when}, not a regular file; a settings file is a plain JSON file. Name ` +
        `the file itself (not a link to a device or a pipe).`,
    );
  }
  if (size > limit) throw tooLarge(path, limit, size);
}

function tooLarge(path: string, limit: number, size?: number): SettingsFileError {
  const is = size === undefined ? "grew" : `is ${size} bytes,`;
  return new SettingsFileError(
    `${path} ${is} over the limit of ${limit} bytes for a settings file (Claude Code's are a ` +
      `few kilobytes); check that it is the file you meant.`,
  );
}
