/**
 * How the gate shows a call it asks about, by the call's description (the catalog's, see
 * tools/describe.ts; nothing here reads a call's arguments or names a tool), and what it reads of
 * an edit's path: the edit as a diff of the file it would change (read pinned inside the
 * workspace, never through a link out of it, never a FIFO or a file over 1 MiB), else the change
 * as asked; whether the edit lands in git's or Deft's own files; text made safe for a terminal.
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { diffFilesSync } from "../policy/git.ts";
import { terminalText } from "../policy/terminal_text.ts";
import type { AskedChange, CallDescription, CallDiff } from "../tools/catalog.ts";
import { readWorkspaceFile } from "../tools/fs/workspace_read.ts";

const SHOWN_LINES = 200;
/** A longer line of a change as asked is cut: the question stays readable on a terminal. */
const SHOWN_LINE_CHARS = 1000;
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
 * What the user sees of an edit (`described`: the call's description, whose diff says which file
 * and how its text after is computed): the change as it would read in the file, else (no
 * preview can be made) the change as the model asked for it, else the call as made. In a
 * container the path is the container's: the host's file at that path is not the one edited,
 * so nothing is read.
 */
export function showEdit(
  described: CallDescription,
  call: { name: string; args: unknown },
  workspace: string | undefined,
  inContainer: boolean,
): string {
  const diff = described.diff;
  const preview = diff && !inContainer ? previewEdit(diff, workspace ?? Deno.cwd()) : undefined;
  if (preview !== undefined) return preview;
  if (diff?.change) return askedLines(diff.path, diff.change).join("\n");
  return callAsMade(call.name, call.args);
}

/** What the user sees of a command: its whole line, as its description gives it. */
export function showCommand(described: CallDescription): string {
  return described.command === undefined ? described.title : `$ ${described.command}`;
}

/** A call as the model made it: the tool's name and its arguments as JSON (at most 2000 characters). */
export function callAsMade(name: string, args: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(args) ?? String(args);
  } catch {
    json = "(arguments that cannot be shown)";
  }
  return `${name} ${clip(json)}`;
}

/** The change a call asks for, as the lines of a diff headed by the file, at most 200 lines. */
function askedLines(path: string, change: AskedChange): string[] {
  switch (change.kind) {
    case "create":
      return [`+++ ${path} (new file)`, ...signed("+", change.text)];
    case "replace": {
      const removed = signed("-", change.old);
      const added = change.new === "" ? [] : signed("+", change.new);
      return limitLines([`--- ${path}`, `+++ ${path}`, ...removed, ...added]);
    }
    case "insert":
      return [`+++ ${path} (after line ${change.afterLine})`, ...signed("+", change.text)];
  }
}

/**
 * The lines of `text`, each after `sign`: at most `SHOWN_LINES` of them and `SHOWN_LINE_CHARS`
 * characters each, with a note of the cut. The text is never split whole, nor copied: the model
 * may send a huge one.
 */
function signed(sign: string, text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  while (lines.length < SHOWN_LINES) {
    const found = text.indexOf("\n", start);
    const end = found < 0 ? text.length : found;
    const line = text.slice(start, Math.min(end, start + SHOWN_LINE_CHARS));
    const cut = end - start > SHOWN_LINE_CHARS;
    lines.push(`${sign}${line}${cut ? "…" : ""}`);
    if (found < 0) return lines;
    start = found + 1;
  }
  return [...lines, "… more line(s)"];
}

function previewEdit(diff: CallDiff, workspace: string): string | undefined {
  if (!diff.after) return undefined;
  // Only a regular file inside the workspace, read pinned: its lines reach the terminal, so a
  // file outside must not, whatever the path or a link swapped in says.
  const bytes = readWorkspaceFile(workspace, diff.path, PREVIEW_BYTES);
  if (bytes === undefined) return undefined;
  let before: string | null = null;
  if (bytes !== null) {
    try {
      before = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return undefined;
    }
  }
  return editPreview(diff, before);
}

/**
 * The edit as it would change the file: a unified diff with three lines of context around each
 * change, headed by the path. Undefined when the edit would not apply as given (the editor
 * refuses it then; the request is shown as written).
 */
function editPreview(diff: CallDiff, before: string | null): string | undefined {
  const path = diff.path;
  const after = diff.after?.(before);
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
function clip(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 1999)}…` : text;
}
