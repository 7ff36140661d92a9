/**
 * A JSON (or JSONC) file held as text plus its syntax tree. Edits are made to the text at the
 * tree's offsets, so everything outside the edited values — comments, key order, whitespace,
 * line breaks, the BOM — stays exactly as it was.
 */
import { isUtf8 } from "node:buffer";
import { type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import { FileToolError } from "../fs/errors.ts";

/** One step of a path into a document: an object key or an array index. */
export type Segment = string | number;

/** A parsed JSON(C) document. */
export interface JsonDocument {
  /** The text without the BOM. */
  text: string;
  bom: boolean;
  root: Node;
  /** The document as plain data (safe with keys such as `__proto__`). */
  value: unknown;
}

// Most parse errors listed in one message.
const MAX_LISTED_ERRORS = 3;

/**
 * Parses `bytes` (the file's content) as JSON with comments and trailing commas allowed. Throws
 * `FileToolError` with line and column for invalid JSON, and for empty or non-UTF-8 files.
 */
export function parseDocument(bytes: Uint8Array, shown: string): JsonDocument {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  if (!isUtf8(body)) {
    throw new FileToolError(`Invalid JSON in file ${shown}: the file is not valid UTF-8.`);
  }
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(body);
  return parseText(text, bom, shown);
}

/** Parses `text` (already decoded, BOM removed). */
export function parseText(text: string, bom: boolean, shown: string): JsonDocument {
  if (text.trim() === "") {
    throw new FileToolError(
      `File is empty: ${shown}. There is no JSON to edit; write the whole document with the ` +
        `editor's \`create\` command or with bash first.`,
    );
  }
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || !root) {
    const listed = errors.slice(0, MAX_LISTED_ERRORS).map((e) => describeError(text, e));
    const more = errors.length > MAX_LISTED_ERRORS
      ? ` (and ${errors.length - MAX_LISTED_ERRORS} more)`
      : "";
    throw new FileToolError(
      `Invalid JSON in file ${shown}: ${listed.join("; ")}${more}. Fix the syntax first (for ` +
        `example with the str_replace_based_edit_tool), then retry.`,
    );
  }
  return { text, bom, root, value: valueOf(root) };
}

/** The node at `path` (for objects, the value of the last property with that key). */
export function nodeAt(root: Node, path: readonly Segment[]): Node | undefined {
  let node: Node | undefined = root;
  for (const segment of path) {
    if (!node?.children) return undefined;
    if (node.type === "array") {
      node = typeof segment === "number" ? node.children[segment] : undefined;
    } else if (node.type === "object") {
      const property: Node | undefined = node.children.findLast((p) =>
        p.children?.[0]?.value === String(segment)
      );
      node = property?.children?.[1];
    } else {
      return undefined;
    }
  }
  return node;
}

/** The 1-based line and column of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function describeError(text: string, error: ParseError): string {
  const { line, column } = lineAndColumn(text, error.offset);
  const name = printParseErrorCode(error.error).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return `${name[0].toUpperCase()}${name.slice(1)} at line ${line}, column ${column}`;
}

// Converts a tree to data. Keys are defined, not assigned, so `"__proto__"` stays an ordinary
// key instead of replacing the object's prototype.
function valueOf(node: Node): unknown {
  switch (node.type) {
    case "object": {
      const object: Record<string, unknown> = {};
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (!key || !value) continue;
        Object.defineProperty(object, String(key.value), {
          value: valueOf(value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return object;
    }
    case "array":
      return (node.children ?? []).map(valueOf);
    default:
      return node.value;
  }
}
