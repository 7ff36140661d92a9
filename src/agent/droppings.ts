/**
 * Files a run leaves behind that are not part of any change: caches of Python, Node and test
 * runners, editor and OS litter, and Deft's own atomic-write temp files. A patch leaves them out
 * even when the repository has no `.gitignore`.
 */
import { TEMP_NAME_PATTERN } from "../tools/fs/temp_names.ts";

const DROPPING_DIRS = new Set([
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
  ".hypothesis",
  ".tox",
  ".nox",
  ".venv",
  "node_modules",
  ".ipynb_checkpoints",
  ".eggs",
]);

const DROPPING_FILES = [
  /\.py[cod]$/,
  /\$py\.class$/,
  /^\.DS_Store$/,
  /^Thumbs\.db$/,
  /^\.coverage(\..*)?$/,
  /\.sw[op]$/,
  /~$/,
  /\.egg-info$/,
  TEMP_NAME_PATTERN, // the editor's scratch and crash-recovery files
];

/** True when the repository-relative `path` (with `/` separators) is a dropping. */
export function isDropping(path: string): boolean {
  const parts = path.split("/");
  const name = parts[parts.length - 1];
  if (parts.slice(0, -1).some((dir) => DROPPING_DIRS.has(dir) || dir.endsWith(".egg-info"))) {
    return true;
  }
  return DROPPING_FILES.some((re) => re.test(name));
}
