/**
 * The diff an edit made, for the console. Before an editing call runs (its description in the
 * catalog names the file it changes), that file is read when it is a regular file inside the
 * workspace and not too large, pinned without following links (tools/fs/workspace_read.ts);
 * afterwards `git diff --no-index` compares that copy with the file as it is now, read the same
 * way. What is shown is what changed on disk, not what the model asked for.
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import type { LLMToolCall } from "../../llm/types.ts";
import { diffFilesSync } from "../../policy/git.ts";
import { describeCall } from "../../tools/catalog.ts";
import { readWorkspaceFile } from "../../tools/fs/workspace_read.ts";

const MAX_BYTES = 1024 * 1024;

/** A file's content before an edit (null: it did not exist). */
export interface Snapshot {
  /** The file as the edit named it, made absolute. */
  path: string;
  relative: string;
  /** The workspace it was read in. */
  workspace: string;
  before: Uint8Array | null;
}

/** The file an edit call targets, if the call edits a file inside `workspace` (as written). */
export function editTarget(call: LLMToolCall, workspace: string): string | undefined {
  if (workspace === "") return undefined;
  const path = describeCall(call.name, call.arguments).diff?.path;
  if (path === undefined || path === "") return undefined;
  const full = isAbsolute(path) ? resolve(path) : resolve(workspace, path);
  const rel = relative(workspace, full);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? undefined : full;
}

/** Reads the file `call` is about to edit (synchronously: the edit starts right after). */
export function snapshot(call: LLMToolCall, workspace: string): Snapshot | undefined {
  const path = editTarget(call, workspace);
  if (!path) return undefined;
  const before = readWorkspaceFile(workspace, path, MAX_BYTES);
  if (before === undefined) return undefined;
  return { path, relative: relative(workspace, path), workspace, before };
}

/** The unified diff from the snapshot to the file now, without colour; "" if none. */
export function diffSince(shot: Snapshot): string {
  const dir = Deno.makeTempDirSync({ prefix: "deft-diff-" });
  try {
    const before = join(dir, "before");
    const after = join(dir, "after");
    Deno.writeFileSync(before, shot.before ?? new Uint8Array());
    const now = readWorkspaceFile(shot.workspace, shot.path, MAX_BYTES);
    // Gone is an empty file; anything that may not be read now (a link swapped in) is no diff.
    if (now === undefined) return "";
    Deno.writeFileSync(after, now ?? new Uint8Array());
    const text = diffFilesSync(before, after);
    // Drop git's header (temp file names); the console prints the real path itself.
    const lines = text.split("\n");
    const hunk = lines.findIndex((l) => l.startsWith("@@"));
    return hunk < 0 ? "" : lines.slice(hunk).join("\n").trimEnd();
  } catch {
    return "";
  } finally {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // a leftover temp dir is harmless
    }
  }
}
