/**
 * The four json_edit operations as pure functions from the file's bytes to an output and, for
 * changes, the new bytes. Loaded lazily by the tool (it pulls in jsonc-parser and jsonpath-plus).
 */
import { FileToolError } from "../fs/errors.ts";
import { MAX_RESPONSE_CHARS } from "../edit/numbering.ts";
import { type JsonDocument, nodeAt, parseDocument, parseText, type Segment } from "./document.ts";
import {
  appendProperty,
  applyEdits,
  insertElement,
  removeValue,
  replaceValue,
  type TextEdit,
} from "./edits.ts";
import { formatPath, type Match, query, selectsNames, splitLastStep } from "./jsonpath.ts";
import { detectStyle } from "./style.ts";

/** What to do, with arguments already checked for presence. */
export interface JsonEditRequest {
  operation: "view" | "set" | "add" | "remove";
  /** The path as the model wrote it, for messages. */
  shown: string;
  jsonPath?: string;
  value?: unknown;
  prettyPrint: boolean;
}

/** The output for the model and, when the file changes, its new bytes. */
export interface JsonEditOutcome {
  output: string;
  bytes?: Uint8Array;
}

/** Runs one operation on a file's `bytes`. Throws `FileToolError` for the model's mistakes. */
export function runJsonEdit(bytes: Uint8Array, request: JsonEditRequest): JsonEditOutcome {
  const doc = parseDocument(bytes, request.shown);
  const path = request.jsonPath;
  switch (request.operation) {
    case "view":
      return { output: path === undefined ? viewWhole(doc, request.shown) : viewPath(doc, path) };
    case "set":
      return set(doc, request, path!);
    case "add":
      return add(doc, request, path!);
    case "remove":
      return remove(doc, request, path!);
  }
}

function viewWhole(doc: JsonDocument, shown: string): string {
  return clip(`JSON content of ${shown}:\n${doc.text.replaceAll("\r\n", "\n")}`);
}

function viewPath(doc: JsonDocument, path: string): string {
  const matches = query(doc.value, path);
  if (matches.length === 0) return `No matches found for JSONPath: ${path}`;
  if (matches.length === 1) {
    return clip(`JSONPath '${path}' matches:\n${JSON.stringify(matches[0].value, null, 2)}`);
  }
  const listed = matches.map((m) => `${formatPath(m.path)}: ${JSON.stringify(m.value, null, 2)}`);
  return clip(`JSONPath '${path}' matches ${matches.length} locations:\n${listed.join("\n")}`);
}

function set(doc: JsonDocument, request: JsonEditRequest, path: string): JsonEditOutcome {
  const matches = valueMatches(doc, path, "set");
  const style = detectStyle(doc.text);
  const edits: TextEdit[] = outermost(matches).flatMap((m) =>
    replaceValue(doc.text, nodeAt(doc.root, m.path)!, request.value, style, request.prettyPrint)
  );
  return {
    output: `Successfully updated ${matches.length} location(s) at JSONPath '${path}' with ` +
      `value: ${JSON.stringify(request.value)}`,
    bytes: finish(doc, applyEdits(doc.text, edits), request.shown),
  };
}

function remove(doc: JsonDocument, request: JsonEditRequest, path: string): JsonEditOutcome {
  const matches = valueMatches(doc, path, "remove");
  if (matches.some((m) => m.path.length === 0)) {
    throw new FileToolError(
      `Cannot remove the root of the JSON document (JSONPath '${path}'). To empty it, use set ` +
        `with {} or [].`,
    );
  }
  const targets = outermost(matches);
  let text = doc.text;
  // One at a time from the end of the document, so the paths still to go stay valid.
  for (const target of inReverseDocumentOrder(doc, targets)) {
    const current = parseText(text, doc.bom, request.shown);
    text = applyEdits(text, removeValue(text, nodeAt(current.root, target.path)!));
  }
  return {
    output: `Successfully removed ${targets.length} element(s) at JSONPath '${path}'`,
    bytes: finish(doc, text, request.shown),
  };
}

function add(doc: JsonDocument, request: JsonEditRequest, path: string): JsonEditOutcome {
  if (selectsNames(path)) throw namesError(path, "add");
  const { parent, last } = splitLastStep(path);
  const parents = query(doc.value, parent);
  if (parents.length === 0) throw new FileToolError(`Parent path not found: ${parent}`);
  const style = detectStyle(doc.text);
  let text = doc.text;
  let replaced = 0;
  for (const target of inReverseDocumentOrder(doc, parents)) {
    const current = parseText(text, doc.bom, request.shown);
    const container = nodeAt(current.root, target.path)!;
    const where = formatPath(target.path);
    let edits: TextEdit[];
    if (last.kind === "key") {
      if (container.type !== "object") {
        throw new FileToolError(`Cannot add key to non-object at path: ${where}`);
      }
      const existing = nodeAt(container, [last.key]);
      if (existing) replaced++;
      edits = existing
        ? replaceValue(text, existing, request.value, style, request.prettyPrint)
        : appendProperty(text, container, last.key, request.value, style, request.prettyPrint);
    } else {
      if (container.type !== "array") {
        throw new FileToolError(`Cannot add element to non-array at path: ${where}`);
      }
      const length = container.children?.length ?? 0;
      if (last.index > length) {
        throw new FileToolError(
          `Cannot add element at index ${last.index} of the array at path: ${where}: it has ` +
            `${length} element(s); use an index from 0 to ${length} (${length} appends).`,
        );
      }
      edits = insertElement(text, container, last.index, request.value, style, request.prettyPrint);
    }
    text = applyEdits(text, edits);
  }
  const where = parents.length > 1 ? ` (${parents.length} locations)` : "";
  const note = replaced > 0
    ? ` (the key already existed in ${replaced} place(s); its value was replaced)`
    : "";
  return {
    output: `Successfully added value at JSONPath '${path}'${where}${note}`,
    bytes: finish(doc, text, request.shown),
  };
}

// Matches of a path that set/remove may change; none is an error, as in Trae Agent.
function valueMatches(doc: JsonDocument, path: string, operation: string): Match[] {
  if (selectsNames(path)) throw namesError(path, operation);
  const matches = query(doc.value, path);
  if (matches.length === 0) throw new FileToolError(`No matches found for JSONPath: ${path}`);
  return matches;
}

function namesError(path: string, operation: string): FileToolError {
  return new FileToolError(
    `JSONPath '${path}' selects property names (\`~\`); ${operation} needs a path to values.`,
  );
}

// Drops matches inside other matches: changing the outer one covers them.
function outermost(matches: readonly Match[]): Match[] {
  return matches.filter((m) =>
    !matches.some((o) => o !== m && o.path.length < m.path.length && isPrefix(o.path, m.path))
  );
}

function isPrefix(prefix: readonly Segment[], path: readonly Segment[]): boolean {
  return prefix.every((s, i) => s === path[i]);
}

function inReverseDocumentOrder(doc: JsonDocument, matches: readonly Match[]): Match[] {
  const offset = (m: Match) => nodeAt(doc.root, m.path)?.offset ?? 0;
  return [...matches].sort((a, b) => offset(b) - offset(a));
}

// The new file bytes, after checking the edited text still parses (never write broken JSON).
function finish(doc: JsonDocument, text: string, shown: string): Uint8Array {
  try {
    parseText(text, doc.bom, shown);
  } catch (e) {
    throw new Error(`json_edit produced invalid JSON and did not write it: ${e}`);
  }
  const body = new TextEncoder().encode(text);
  if (!doc.bom) return body;
  const out = new Uint8Array(body.length + 3);
  out.set([0xef, 0xbb, 0xbf]);
  out.set(body, 3);
  return out;
}

function clip(text: string): string {
  if (text.length <= MAX_RESPONSE_CHARS) return text;
  return `${text.slice(0, MAX_RESPONSE_CHARS)}\n<response clipped><NOTE>To save on context only ` +
    `part of the JSON has been shown. View parts of it with \`json_path\` (e.g. \`$.key\` or ` +
    `\`$.items[0:10]\`).</NOTE>`;
}
