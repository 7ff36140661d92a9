/** The `str_replace_based_edit_tool` tool as the model sees it: name, description, parameters. */
import type { CallEffect } from "../base.ts";
import type { ToolDefinitionSource } from "../catalog_types.ts";

/** `str_replace_based_edit_tool`'s model-facing definition (kept apart from the implementation, which loads lazily). */
export const EDIT: ToolDefinitionSource = {
  name: "str_replace_based_edit_tool",
  description: [
    "View, create and edit files.",
    "* Paths must be absolute and inside the workspace.",
    "* `view` on a file shows it with line numbers (`cat -n` style); `view_range` [start, end] " +
    "narrows it (1-based, end -1 = last line). On a directory it lists entries two levels deep, " +
    "hidden ones left out (their number is noted).",
    "* `create` writes a new file; it refuses a path that already exists.",
    "* `str_replace` replaces `old_str` with `new_str`. `old_str` must match exactly one place in " +
    "the file, whitespace included: add surrounding lines to make it unique. Omit `new_str` to " +
    "delete.",
    "* `insert` puts the lines of `new_str` after line `insert_line` (0 = top of the file). " +
    '`new_str` is split at `\\n`; one trailing `\\n` just ends its last line, so `"X"` and ' +
    '`"X\\n"` insert one line and `"X\\n\\n"` inserts X and a blank line. After a last line ' +
    "without a line break, one is added and the file ends as `new_str` ends.",
    "* `undo_edit` reverts the last edit of the file.",
    "* Tabs, line endings (LF/CRLF), encoding and the final newline of the file are kept.",
    "* Files not in UTF-8 (GBK, Big5, Shift_JIS, EUC-JP/KR, Windows-125x, KOI8-R, UTF-16, ...) " +
    "are detected, shown decoded (the view names the encoding) and written back in their own " +
    "encoding. When detection is unsure, the view says so: pass `encoding` to read or edit in " +
    "the one you know.",
  ].join("\n"),
  parameters: [
    {
      name: "command",
      type: "string",
      description: "The command to run.",
      enum: ["view", "create", "str_replace", "insert", "undo_edit"],
      required: true,
    },
    {
      name: "path",
      type: "string",
      description: "Absolute path of the file or directory, e.g. `/repo/file.py`.",
      required: true,
    },
    {
      name: "file_text",
      type: "string",
      description: "For `create`: the content of the new file.",
    },
    {
      name: "insert_line",
      type: "integer",
      description: "For `insert`: the line after which `new_str` goes (0 = before line 1).",
    },
    {
      name: "new_str",
      type: "string",
      description: "For `str_replace`: the replacement (omit to delete). For `insert`: the text.",
    },
    {
      name: "old_str",
      type: "string",
      description: "For `str_replace`: the exact text to replace; it must occur exactly once.",
    },
    {
      name: "encoding",
      type: "string",
      description: "The file's encoding, e.g. `gbk`, `shift_jis`, `windows-1251`, `utf-16le`, " +
        "when detection is unsure or wrong; for `create`, the encoding to write (default UTF-8).",
    },
    {
      name: "view_range",
      type: "array",
      items: { type: "integer" },
      description:
        "For `view` on a file: [start, end] line numbers, 1-based; end -1 = end of file.",
    },
  ],
};

/**
 * What a `str_replace_based_edit_tool` call does: `view` reads; `create`, `str_replace` and
 * `insert` change the file as `after` computes it from the text before (undefined where the
 * editor would refuse); `undo_edit` takes back the file's latest edit.
 */
export function editEffects(args: Record<string, unknown>): CallEffect {
  const text = (v: unknown) => typeof v === "string" ? v : undefined;
  const path = text(args.path) ?? "";
  const lines = (prefix: string, body: string | undefined) =>
    (body ?? "").split("\n").map((l) => `${prefix}${l}`);
  switch (args.command) {
    case "view":
      return { kind: "read" };
    case "create": {
      const fileText = text(args.file_text);
      return {
        kind: "edit",
        path,
        summary: [`+++ ${path} (new file)`, ...lines("+", fileText)].join("\n"),
        after: () => fileText,
      };
    }
    case "str_replace": {
      const old = text(args.old_str);
      return {
        kind: "edit",
        path,
        summary: [
          `--- ${path}`,
          `+++ ${path}`,
          ...lines("-", old),
          ...lines("+", text(args.new_str)),
        ]
          .join("\n"),
        after: (before) =>
          before === null || !old || before.split(old).length !== 2
            ? undefined
            : before.replace(old, () => text(args.new_str) ?? ""),
      };
    }
    case "insert": {
      const added = text(args.new_str);
      const at = args.insert_line;
      return {
        kind: "edit",
        path,
        summary: [`+++ ${path} (after line ${at})`, ...lines("+", added)].join("\n"),
        after: (before) => {
          if (before === null || added === undefined || typeof at !== "number") return undefined;
          const old = before.split("\n");
          if (!Number.isInteger(at) || at < 0 || at > old.length) return undefined;
          return [...old.slice(0, at), ...added.split("\n"), ...old.slice(at)].join("\n");
        },
      };
    }
    case "undo_edit":
      return { kind: "edit", path, summary: `undo the last edit of ${path}`, reverts: true };
    default:
      // Validation admits only the commands above; anything else is shown as it is.
      return { kind: "edit", path, summary: `${String(args.command)} ${path}` };
  }
}

/** The call that takes back the latest edit of `path` through the editor's own history. */
export function editUndo(path: string): Record<string, unknown> {
  return { command: "undo_edit", path };
}

/**
 * The call that makes the file at `path` read `after`, given its text `before` (null: no file
 * there): a new file is created, an empty one filled by an insert, any other replaced whole by
 * one `str_replace` (which fails, changing nothing, when the file no longer holds `before`).
 */
export function editRewrite(
  path: string,
  before: string | null,
  after: string,
): Record<string, unknown> {
  if (before === null) return { command: "create", path, file_text: after };
  if (before === "") return { command: "insert", path, insert_line: 0, new_str: after };
  return { command: "str_replace", path, old_str: before, new_str: after };
}
