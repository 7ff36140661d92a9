/**
 * Minimal text edits on a JSON(C) document: replace a value, remove a member, add a member. Each
 * edit touches only the value (plus the comma and line it needs); comments and the layout of
 * everything else are left alone. Layout decisions follow the surrounding lines: members on
 * their own lines get a line of their own, inline members stay inline.
 */
import type { Node } from "jsonc-parser";
import { type JsonStyle, renderValue } from "./style.ts";

/** Replace `length` characters at `offset` with `content`. */
export interface TextEdit {
  offset: number;
  length: number;
  content: string;
}

/** Applies non-overlapping edits to `text`; insertions at one offset land in the given order. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  let out = text;
  const order = edits.map((edit, index) => ({ edit, index }))
    .sort((a, b) => b.edit.offset - a.edit.offset || b.index - a.index);
  for (const { edit } of order) {
    out = out.slice(0, edit.offset) + edit.content + out.slice(edit.offset + edit.length);
  }
  return out;
}

/** Replaces the value `node` with `value`. */
export function replaceValue(
  text: string,
  node: Node,
  value: unknown,
  style: JsonStyle,
  pretty: boolean,
): TextEdit[] {
  const container = containerOf(node);
  const multiline = container ? spansLines(text, container) : text.includes("\n");
  const base = indentOf(text, node.offset);
  return [{
    offset: node.offset,
    length: node.length,
    content: renderValue(value, style, base, pretty && multiline),
  }];
}

/** Removes the value `node` from its object (key included) or array, with its comma. */
export function removeValue(text: string, node: Node): TextEdit[] {
  const unit = node.parent?.type === "property" ? node.parent : node;
  const container = unit.parent!;
  const siblings = container.children!;
  if (siblings.length === 1) {
    return [{ offset: container.offset + 1, length: container.length - 2, content: "" }];
  }
  const index = siblings.indexOf(unit);
  const previous = siblings[index - 1];
  const next = siblings[index + 1];
  const end = unit.offset + unit.length;
  const comma = commaAfter(text, end);
  const after = comma === -1 ? end : comma + 1;
  if (startsLine(text, unit.offset) && restIsTrivia(text, after)) {
    const from = lineStart(text, unit.offset);
    const edits = [{ offset: from, length: afterLineBreak(text, after) - from, content: "" }];
    if (!next && comma === -1 && previous) {
      // The comma before the removed last member would be left trailing.
      const separator = commaAfter(text, previous.offset + previous.length);
      if (separator !== -1) edits.push({ offset: separator, length: 1, content: "" });
    }
    return edits;
  }
  if (next) return [{ offset: unit.offset, length: next.offset - unit.offset, content: "" }];
  const from = previous.offset + previous.length;
  return [{ offset: from, length: after - from, content: "" }];
}

/** Adds `"key": value` at the end of `object`. */
export function appendProperty(
  text: string,
  object: Node,
  key: string,
  value: unknown,
  style: JsonStyle,
  pretty: boolean,
): TextEdit[] {
  return appendMember(
    text,
    object,
    (base, multiline) =>
      JSON.stringify(key) + style.colon + renderValue(value, style, base, pretty && multiline),
    style,
    pretty,
  );
}

/** Inserts `value` into `array` at `index` (0..length; length appends). */
export function insertElement(
  text: string,
  array: Node,
  index: number,
  value: unknown,
  style: JsonStyle,
  pretty: boolean,
): TextEdit[] {
  const children = array.children ?? [];
  const render = (base: string, multiline: boolean) =>
    renderValue(value, style, base, pretty && multiline);
  if (index >= children.length) return appendMember(text, array, render, style, pretty);
  const target = children[index];
  if (startsLine(text, target.offset)) {
    const indent = indentOf(text, target.offset);
    return [{
      offset: lineStart(text, target.offset),
      length: 0,
      content: `${indent}${render(indent, true)},${style.eol}`,
    }];
  }
  return [{
    offset: target.offset,
    length: 0,
    content: render("", false) + inlineSeparator(text, children, style),
  }];
}

// Adds a member (rendered by `member` for a given indentation) after the last one.
function appendMember(
  text: string,
  container: Node,
  member: (base: string, multiline: boolean) => string,
  style: JsonStyle,
  pretty: boolean,
): TextEdit[] {
  const children = container.children ?? [];
  const [open, close] = container.type === "array" ? ["[", "]"] : ["{", "}"];
  if (children.length === 0) {
    const base = indentOf(text, container.offset);
    const expand = pretty && text.includes("\n");
    const inner = base + style.indent;
    return [{
      offset: container.offset,
      length: container.length,
      content: expand
        ? `${open}${style.eol}${inner}${member(inner, true)}${style.eol}${base}${close}`
        : `${open}${member(base, false)}${close}`,
    }];
  }
  const last = children[children.length - 1];
  const end = last.offset + last.length;
  const comma = commaAfter(text, end);
  const after = comma === -1 ? end : comma + 1;
  if (startsLine(text, last.offset) && restIsTrivia(text, after)) {
    const indent = indentOf(text, last.offset);
    const line = lineBreakAt(text, after);
    const added = `${style.eol}${indent}${member(indent, true)}`;
    // A trailing comma after the old last member is the file's style: keep one after the new.
    return comma === -1
      ? [{ offset: end, length: 0, content: "," }, { offset: line, length: 0, content: added }]
      : [{ offset: line, length: 0, content: `${added},` }];
  }
  return [{
    offset: end,
    length: 0,
    content: inlineSeparator(text, children, style) + member(indentOf(text, last.offset), false),
  }];
}

// The object or array that holds `node` (skipping the property node of an object member).
function containerOf(node: Node): Node | undefined {
  const parent = node.parent;
  return parent?.type === "property" ? parent.parent : parent;
}

function spansLines(text: string, node: Node): boolean {
  return text.slice(node.offset, node.offset + node.length).includes("\n");
}

// The separator inline members use: as between the first two, else the file's habit.
function inlineSeparator(text: string, children: readonly Node[], style: JsonStyle): string {
  if (children.length < 2) return style.comma;
  const between = text.slice(children[0].offset + children[0].length, children[1].offset);
  return /^\s*,( ?)\s*$/.exec(between)?.[1] === "" ? "," : ", ";
}

// Offset of the comma that follows `offset` past whitespace and comments, or -1.
function commaAfter(text: string, offset: number): number {
  const at = skipTrivia(text, offset);
  return text[at] === "," ? at : -1;
}

function skipTrivia(text: string, offset: number): number {
  let i = offset;
  while (i < text.length) {
    if (/\s/.test(text[i])) i++;
    else if (text.startsWith("//", i)) i = lineBreakAt(text, i);
    else if (text.startsWith("/*", i)) {
      const close = text.indexOf("*/", i + 2);
      i = close === -1 ? text.length : close + 2;
    } else break;
  }
  return i;
}

// True when only blanks and comments follow `offset` on its line.
function restIsTrivia(text: string, offset: number): boolean {
  let i = offset;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\t") i++;
    else if (c === "\r" || c === "\n") return true;
    else if (text.startsWith("//", i)) return true;
    else if (text.startsWith("/*", i)) {
      const close = text.indexOf("*/", i + 2);
      if (close === -1 || text.slice(i, close).includes("\n")) return false;
      i = close + 2;
    } else return false;
  }
  return true;
}

function lineStart(text: string, offset: number): number {
  return offset <= 0 ? 0 : text.lastIndexOf("\n", offset - 1) + 1;
}

// Offset of the line break (`\r\n` or `\n`) ending the line of `offset`, or the text's end.
function lineBreakAt(text: string, offset: number): number {
  const nl = text.indexOf("\n", offset);
  if (nl === -1) return text.length;
  return nl > 0 && text[nl - 1] === "\r" ? nl - 1 : nl;
}

// Offset just past the line break ending the line of `offset`.
function afterLineBreak(text: string, offset: number): number {
  const nl = text.indexOf("\n", offset);
  return nl === -1 ? text.length : nl + 1;
}

function startsLine(text: string, offset: number): boolean {
  return text.slice(lineStart(text, offset), offset).trim() === "";
}

function indentOf(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset), offset))![0];
}
