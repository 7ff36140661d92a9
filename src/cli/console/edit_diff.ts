/**
 * The diff an edit made, for the console. Before an editing call runs, the file it names is read
 * (when it is inside the workspace and not too large); afterwards `git diff --no-index` compares
 * that copy with the file as it is now. What is shown is what changed on disk, not what the model
 * asked for.
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import type { LLMToolCall } from "../../llm/types.ts";
import { diffFilesSync } from "../../policy/git.ts";

const EDIT_TOOLS = new Set(["strreplacebasededittool", "jsonedittool"]);
const MAX_BYTES = 1024 * 1024;

/** A file's content before an edit (null: it did not exist). */
export interface Snapshot {
  path: string;
  relative: string;
  before: Uint8Array | null;
}

/** The file an edit call targets, if the call edits a file inside `workspace`. */
export function editTarget(call: LLMToolCall, workspace: string): string | undefined {
  if (!EDIT_TOOLS.has(call.name.toLowerCase().replaceAll("_", ""))) return undefined;
  const args = call.arguments as Record<string, unknown> | null;
  if (!args || typeof args !== "object") return undefined;
  if (args.command === "view") return undefined;
  const path = typeof args.path === "string"
    ? args.path
    : typeof args.file_path === "string"
    ? args.file_path
    : undefined;
  if (!path) return undefined;
  const full = isAbsolute(path) ? resolve(path) : resolve(workspace, path);
  const rel = relative(workspace, full);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? undefined : full;
}

/** Reads the file `call` is about to edit (synchronously: the edit starts right after). */
export function snapshot(call: LLMToolCall, workspace: string): Snapshot | undefined {
  const path = editTarget(call, workspace);
  if (!path) return undefined;
  const rel = relative(workspace, path);
  try {
    const info = Deno.lstatSync(path);
    if (!info.isFile || info.size > MAX_BYTES) return undefined;
    return { path, relative: rel, before: Deno.readFileSync(path) };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { path, relative: rel, before: null };
    return undefined;
  }
}

/** The unified diff from the snapshot to the file now, without colour; "" if none. */
export function diffSince(shot: Snapshot): string {
  const dir = Deno.makeTempDirSync({ prefix: "deft-diff-" });
  try {
    const before = join(dir, "before");
    const after = join(dir, "after");
    Deno.writeFileSync(before, shot.before ?? new Uint8Array());
    try {
      const info = Deno.lstatSync(shot.path);
      if (!info.isFile || info.size > MAX_BYTES) return "";
      Deno.writeFileSync(after, Deno.readFileSync(shot.path));
    } catch {
      Deno.writeFileSync(after, new Uint8Array());
    }
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
