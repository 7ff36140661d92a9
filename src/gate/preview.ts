/**
 * How the gate shows a call it asks about, and what it reads of an edit's path: the edit as a
 * diff of the file it would change (read pinned inside the workspace, never through a link out
 * of it), whether the edit lands in git's or Deft's own files, and text made safe for a terminal.
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { diffFilesSync } from "../policy/git.ts";
import { terminalText } from "../policy/terminal_text.ts";
import type { CallDiff } from "../tools/catalog.ts";
import { readWorkspaceFile } from "../tools/fs/workspace_read.ts";

const SHOWN_LINES = 200;
/** Files larger than this are not read to preview an edit. */
const PREVIEW_BYTES = 1024 * 1024;

/**
 * The text with control characters and bidirectional overrides spelled out, so a command cannot
 * disguise itself on the terminal (a carriage return or an escape sequence that redraws the line).
 */
export function visible(text: string): string {
  return terminalText(text, { style: "escape" });
}

/** `path` with its longest existing prefix resolved through symlinks. */
function resolvedPath(path: string): string {
  const rest: string[] = [];
  for (let head = path;; head = dirname(head)) {
    try {
      return join(Deno.realPathSync(head), ...rest);
    } catch {
      if (head === dirname(head)) return path;
      rest.unshift(basename(head));
    }
  }
}

/**
 * Whether an edit lands in git's own files (`.git/…`, `.gitattributes`, `.gitmodules`) or in
 * Deft's config file of a folder (`deft.yaml`, `trae_config.yaml`: in a trusted folder it sets
 * hooks and MCP servers, programs started outside the sandbox), by the path as written and by
 * where it resolves: a symlink `g -> .git` makes `g/config` git's. A container's path means
 * nothing on the host: judged as written (no command runs unasked there, so a symlink to .git
 * cannot make a reader run git's programs).
 */
export function touchesGit(path: string, workspace: string | undefined, inContainer: boolean) {
  const full = isAbsolute(path) ? path : resolve(workspace ?? Deno.cwd(), path);
  return [path, inContainer ? full : resolvedPath(full)].some((p) =>
    p.split("/").some((part) =>
      part === ".git" || /^\.git(attributes|modules)$/.test(part) ||
      part === "deft.yaml" || part === "trae_config.yaml"
    )
  );
}

/**
 * An edit as the gate previews it: the file and how its text after is computed (the shape of a
 * call description's diff, which an edit's effect has too), and the change as the model asked
 * for it in a few lines.
 */
export type PreviewedEdit = Pick<CallDiff, "path" | "after"> & { readonly summary: string };

/**
 * What the user sees of an edit: the change as it would read in the file, else (no preview can
 * be made) the change as the model asked for it. In a container the path is the container's:
 * the host's file at that path is not the one edited, so nothing is read.
 */
export function showEdit(
  effect: PreviewedEdit,
  workspace: string | undefined,
  inContainer: boolean,
) {
  const preview = inContainer ? undefined : previewEdit(effect, workspace ?? Deno.cwd());
  return preview ?? limitLines(effect.summary.split("\n")).join("\n");
}

function previewEdit(effect: PreviewedEdit, workspace: string): string | undefined {
  if (!effect.after) return undefined;
  // Only a regular file inside the workspace, read pinned: its lines reach the terminal, so a
  // file outside must not, whatever the path or a link swapped in says.
  const bytes = readWorkspaceFile(workspace, effect.path, PREVIEW_BYTES);
  if (bytes === undefined) return undefined;
  let before: string | null = null;
  if (bytes !== null) {
    try {
      before = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return undefined;
    }
  }
  return editPreview(effect, before);
}

/**
 * The edit as it would change the file: a unified diff with three lines of context around each
 * change, headed by the path. Undefined when the edit would not apply as given (the editor
 * refuses it then; the request is shown as written).
 */
function editPreview(effect: PreviewedEdit, before: string | null): string | undefined {
  const path = effect.path;
  const after = effect.after?.(before);
  if (after === undefined) return undefined;
  const dir = Deno.makeTempDirSync({ prefix: "deft-approve-" });
  try {
    Deno.writeTextFileSync(join(dir, "before"), before ?? "");
    Deno.writeTextFileSync(join(dir, "after"), after);
    const diff = diffFilesSync(join(dir, "before"), join(dir, "after"), 3);
    const lines = diff.split("\n");
    const hunk = lines.findIndex((l) => l.startsWith("@@"));
    if (hunk < 0) return `${path}: no change`;
    const head = before !== null ? [`--- ${path}`, `+++ ${path}`] : [`+++ ${path} (new file)`];
    return [...head, ...limitLines(lines.slice(hunk))].join("\n").trimEnd();
  } catch {
    return undefined;
  } finally {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* a leftover temp folder is harmless */ }
  }
}

function limitLines(lines: string[]): string[] {
  if (lines.length <= SHOWN_LINES) return lines;
  return [...lines.slice(0, SHOWN_LINES), `… ${lines.length - SHOWN_LINES} more line(s)`];
}

/** A call's arguments as shown, at most 2000 characters. */
export function clip(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 1999)}…` : text;
}
