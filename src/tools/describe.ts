/**
 * How a call is shown: one description per built-in tool (its catalog entry's `describe`), read by
 * every place that shows a call — the approval preview, the terminal console, the ACP console and
 * its permission requests, `deft report`. Those read the description only, never a tool's
 * argument names or its name; this module and the tools' definitions are where argument names are
 * read. A description is total and has no effect: any arguments (missing, of the wrong type,
 * huge) give one, and the text it builds is bounded (a title is at most `TITLE_CHARS` characters
 * on one line) and masked (Deft's one set of secrets) before it is cut.
 */
import type { CallEffect } from "./base.ts";
import type { AskedChange, CallDescription, CallDiff, CallLocation } from "./catalog_types.ts";
import { editEffects } from "./edit/definition.ts";
import { maskOutput } from "../policy/secrets.ts";

export type {
  AskedChange,
  CallDescription,
  CallDiff,
  CallKind,
  CallLocation,
} from "./catalog_types.ts";

/** The longest subject a description builds; a title adds at most a few words to it. */
export const SUBJECT_CHARS = 160;
/** The longest title a description builds. */
export const TITLE_CHARS = 200;
/** The longest thought a description carries (a plan entry). */
const THOUGHT_CHARS = 300;
/** Strings longer than this are cut before arguments are rendered as JSON for a subject. */
const JSON_STRING_CHARS = 200;

/**
 * `text` on one line (runs of white space as one space), secrets masked, cut to `max` characters
 * with an ellipsis. Only the first few times `max` characters are looked at, so a huge text costs
 * little. Masking comes before the cut, and a cut never ends in part of a word: a secret cut in
 * two would no longer look like one, and its first half would show unmasked.
 */
export function oneLine(text: string, max: number): string {
  const head = text.length > max * 4 ? text.slice(0, max * 4) : text;
  const flat = maskOutput(head).replace(/\s+/g, " ").trim();
  if (flat.length <= max && head.length === text.length) return flat;
  const kept = flat.length < max ? flat : flat.slice(0, max - 1);
  // The word the cut falls in is left out, unless it is all there is (a long path).
  const word = /[^\s"'`()<>|;&,:]*$/.exec(kept)!.index;
  return `${word > 0 ? kept.slice(0, word) : kept}…`;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function positiveLine(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : undefined;
}

function locationsOf(path: string | undefined, line?: number): CallLocation[] {
  if (path === undefined || path === "") return [];
  return [line === undefined ? { path } : { path, line }];
}

/** `after` that answers undefined (no preview) where it would throw. */
function guarded(
  after: (before: string | null) => string | undefined,
): (before: string | null) => string | undefined {
  return (before) => {
    try {
      const text = after(before);
      return typeof text === "string" ? text : undefined;
    } catch {
      return undefined;
    }
  };
}

/**
 * Words joined by spaces, the empty ones left out, each cut to what a subject can show first (so
 * that a huge argument is not copied whole to be cut afterwards).
 */
function words(...parts: (string | undefined)[]): string {
  return parts
    .filter((p): p is string => p !== undefined && p !== "")
    .map((p) => p.length > SUBJECT_CHARS * 4 ? p.slice(0, SUBJECT_CHARS * 4) : p)
    .join(" ");
}

/** `bash`: the command line it runs, or a restart of the shell. */
export function describeBash(args: Record<string, unknown>): CallDescription {
  if (args.restart === true) {
    return { title: "restart the shell", subject: "restart", kind: "other", locations: [] };
  }
  const command = str(args.command);
  if (command === undefined) {
    return { title: "$ (no command)", subject: "", kind: "other", locations: [] };
  }
  const subject = oneLine(command, SUBJECT_CHARS);
  const others = Object.keys(args).some((k) => k !== "command" && args[k] !== undefined);
  return {
    title: `$ ${subject}`,
    subject,
    kind: "execute",
    locations: [],
    command,
    saysAll: !others && subject === command,
  };
}

/** `str_replace_based_edit_tool`: a view, or an edit of one file with its diff. */
export function describeEdit(args: Record<string, unknown>): CallDescription {
  const command = str(args.command);
  const path = str(args.path) ?? "";
  const subject = oneLine(words(command, path), SUBJECT_CHARS);
  const base = { title: oneLine(subject, TITLE_CHARS), subject };
  // The text after an edit is the editor's own rule (its definition says it), computed only
  // when a preview is wanted.
  const after = guarded((before) => {
    const effect = editEffects(args);
    return effect.kind === "edit" ? effect.after?.(before) : undefined;
  });
  // A call without a path changes no file: it fails before anything happens.
  const changes = (diff: CallDiff) => path === "" ? {} : { diff };
  switch (command) {
    case "view": {
      const range = Array.isArray(args.view_range) ? args.view_range : [];
      return { ...base, kind: "read", locations: locationsOf(path, positiveLine(range[0])) };
    }
    case "create": {
      const text = str(args.file_text);
      return {
        ...base,
        kind: "edit",
        locations: locationsOf(path),
        ...changes({
          path,
          after,
          ...(text === undefined ? {} : { change: { kind: "create", text } }),
        }),
      };
    }
    case "str_replace": {
      const old = str(args.old_str);
      const change: AskedChange | undefined = old === undefined
        ? undefined
        : { kind: "replace", old, new: str(args.new_str) ?? "" };
      return {
        ...base,
        kind: "edit",
        locations: locationsOf(path),
        ...changes({ path, after, ...(change ? { change } : {}) }),
      };
    }
    case "insert": {
      const text = str(args.new_str);
      const at = args.insert_line;
      const line = typeof at === "number" && Number.isSafeInteger(at) && at >= 0 ? at : undefined;
      const change: AskedChange | undefined = text === undefined || line === undefined
        ? undefined
        : { kind: "insert", afterLine: line, text };
      return {
        ...base,
        kind: "edit",
        locations: locationsOf(path, line === undefined ? undefined : line + 1),
        ...changes({ path, after, ...(change ? { change } : {}) }),
      };
    }
    case "undo_edit":
      // The file changes back to what the editor's history holds: a diff from disk, no preview.
      return { ...base, kind: "edit", locations: locationsOf(path), ...changes({ path }) };
    default:
      return { ...base, kind: "other", locations: locationsOf(path) };
  }
}

/** `json_edit_tool`: a view, or a change of the values at a JSONPath. */
export function describeJsonEdit(args: Record<string, unknown>): CallDescription {
  const operation = str(args.operation);
  const path = str(args.file_path) ?? "";
  const subject = oneLine(words(operation, path, str(args.json_path)), SUBJECT_CHARS);
  const base = { title: subject, subject, locations: locationsOf(path) };
  switch (operation) {
    case "view":
      return { ...base, kind: "read" };
    case "set":
    case "add":
    case "remove":
      return { ...base, kind: "edit", ...(path === "" ? {} : { diff: { path } }) };
    default:
      return { ...base, kind: "other" };
  }
}

/** `sequentialthinking`: a step of reasoning. */
export function describeThinking(args: Record<string, unknown>): CallDescription {
  const number = positiveLine(args.thought_number);
  const total = positiveLine(args.total_thoughts);
  const text = oneLine(str(args.thought) ?? "", THOUGHT_CHARS);
  const subject = oneLine(text, SUBJECT_CHARS);
  return {
    title: number === undefined
      ? "thought"
      : `thought ${number}${total === undefined ? "" : ` of ${Math.max(total, number)}`}`,
    subject,
    kind: "think",
    locations: [],
    thought: { text, more: args.next_thought_needed === true },
  };
}

/** `task_done`: the done signal. */
export function describeTaskDone(_args: Record<string, unknown>): CallDescription {
  return { title: "task done", subject: "", kind: "other", locations: [], saysAll: true };
}

/** `task`: a child agent's piece of work, by the words the model named it with. */
export function describeTask(args: Record<string, unknown>): CallDescription {
  const apply = str(args.apply);
  if (apply !== undefined) {
    const subject = oneLine(apply, SUBJECT_CHARS);
    return {
      title: oneLine(`task: apply ${subject}`, TITLE_CHARS),
      subject,
      kind: "other",
      locations: [],
    };
  }
  const mode = str(args.mode) === "read" ? "read" : "write";
  const subject = oneLine(str(args.description) ?? str(args.prompt) ?? "", SUBJECT_CHARS);
  return {
    title: oneLine(`task (${mode}): ${subject}`, TITLE_CHARS),
    subject,
    kind: "other",
    locations: [],
  };
}

/** `ckg`: a search of the code graph for a name. */
export function describeCkg(args: Record<string, unknown>): CallDescription {
  const path = str(args.path);
  const subject = oneLine(words(str(args.command), str(args.identifier)), SUBJECT_CHARS);
  return {
    title: oneLine(path ? `${subject} in ${path}` : subject, TITLE_CHARS),
    subject,
    kind: "search",
    locations: locationsOf(path),
  };
}

/** `web_fetch`: the address fetched, one line. */
export function describeWebFetch(args: Record<string, unknown>): CallDescription {
  const subject = oneLine(str(args.url) ?? "", SUBJECT_CHARS);
  return { title: oneLine(`fetch ${subject}`, TITLE_CHARS), subject, kind: "fetch", locations: [] };
}

/** The arguments as compact JSON, long strings cut first: a subject for a tool that says nothing. */
function compactJson(args: unknown): string {
  try {
    const json = JSON.stringify(
      args,
      (_key, value) =>
        typeof value === "string" && value.length > JSON_STRING_CHARS
          ? `${value.slice(0, JSON_STRING_CHARS)}…`
          : typeof value === "bigint"
          ? String(value)
          : value,
    );
    return oneLine(json ?? "", SUBJECT_CHARS);
  } catch {
    return "";
  }
}

/**
 * A call of a tool outside the catalog (an MCP server's), or with arguments that are not an
 * object: the call as made, and what its tool says it does (`effect`).
 */
export function describeOther(
  name: string,
  args: unknown,
  effect: CallEffect | undefined,
): CallDescription {
  const subject = typeof args === "string" ? oneLine(args, SUBJECT_CHARS) : compactJson(args);
  const title = oneLine(words(name, subject), TITLE_CHARS);
  switch (effect?.kind) {
    case "command": {
      const command = str(effect.command) ?? "";
      return {
        title: `$ ${oneLine(command, SUBJECT_CHARS)}`,
        subject,
        kind: "execute",
        locations: [],
        command,
      };
    }
    case "edit": {
      const path = str(effect.path) ?? "";
      const after = effect.after;
      return {
        title,
        subject,
        kind: "edit",
        locations: locationsOf(path),
        ...(path === "" ? {} : { diff: after ? { path, after: guarded(after) } : { path } }),
      };
    }
    case "read":
      return { title, subject, kind: "read", locations: [] };
    default:
      return { title, subject, kind: "other", locations: [] };
  }
}
