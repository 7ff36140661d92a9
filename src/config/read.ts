/**
 * Reads a config file with its size bounded before the read starts. A config file may belong to
 * a repository (`./deft.yaml`), so it may be a symlink to `/dev/zero`, a FIFO that never ends or a
 * gigabyte of text: it is read as every file Deft reads for itself is (`readOwnFile`, at start),
 * only a regular file of at most MAX_CONFIG_BYTES, and never more than that even if it grows.
 */
import { OwnFileError, readOwnText } from "../policy/own_file.ts";
import { ConfigError } from "./errors.ts";

/** Largest config file read: far above any real one, small enough to load in well under a second. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The text of the config file at `path`. Errors from finding it (`NotFound`, `NotCapable`) pass
 * through for the caller to judge; anything that is not a regular file within the limit is a
 * ConfigError naming the file.
 */
export async function readConfigFile(path: string, limit = MAX_CONFIG_BYTES): Promise<string> {
  try {
    return await readOwnText(path, {
      limit,
      what: "the config file",
      atStart: true,
      hint: "A configuration is a plain YAML file of a few kilobytes (see config.example.yaml): " +
        "replace it with one, or remove it.",
    });
  } catch (e) {
    if (e instanceof OwnFileError) throw new ConfigError(e.message);
    throw e;
  }
}
