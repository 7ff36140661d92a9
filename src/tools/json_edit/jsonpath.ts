/**
 * JSONPath queries through jsonpath-plus in its "safe" evaluation mode: filters such as
 * `[?(@.age > 30)]` work, but expressions are interpreted by jsonpath-plus's own sandboxed
 * evaluator, never run as JavaScript, and checked first by `GuardedScript` (no method calls that
 * could hang or exhaust memory).
 */
import { JSONPath } from "jsonpath-plus";
import { GuardedScript } from "./filter_guard.ts";
import { FileToolError } from "../fs/errors.ts";
import type { Segment } from "./document.ts";

/** One match: where it is and what it holds. */
export interface Match {
  path: Segment[];
  value: unknown;
}

/** The last step of a path for `add`: a key of an object or a position in an array. */
export type LastStep = { kind: "key"; key: string } | { kind: "index"; index: number };

/**
 * The values of `data` that `expression` selects, in document order. Matches that are not real
 * members of the data (such as an array's `length`) are left out. Throws `FileToolError` naming
 * the expression when it is malformed or its evaluation fails.
 */
export function query(data: unknown, expression: string): Match[] {
  const problem = syntaxProblem(expression);
  if (problem) throw invalidExpression(expression, problem);
  let results: { pointer: string; value: unknown }[];
  try {
    results = JSONPath({
      path: expression.trim(),
      json: data as object,
      resultType: "all",
      wrap: true,
      eval: GuardedScript as unknown as "safe",
    }) as { pointer: string; value: unknown }[];
  } catch (e) {
    throw invalidExpression(expression, e instanceof Error ? e.message : String(e));
  } finally {
    // jsonpath-plus caches every path and filter it ever saw; a long-lived server would keep them all.
    JSONPath.clearCache();
  }
  const matches: Match[] = [];
  for (const result of results ?? []) {
    const path = resolvePointer(data, result.pointer);
    if (path) matches.push({ path, value: result.value });
  }
  return matches;
}

/** True when `expression` selects property names (`~`) rather than values. */
export function selectsNames(expression: string): boolean {
  return /~\s*$/.test(expression);
}

/**
 * Splits an `add` path into the path of the container and the step to add, e.g. `$.a.b` into
 * `$.a` and key `b`, `$.items[2]` into `$.items` and index 2. Throws `FileToolError` when the
 * last step is not a plain key or index (a wildcard, filter, slice or recursive descent).
 */
export function splitLastStep(expression: string): { parent: string; last: LastStep } {
  const path = expression.trim();
  const problem = syntaxProblem(path);
  if (problem) throw invalidExpression(expression, problem);
  const unsupported = () =>
    new FileToolError(
      `Unsupported add operation for path type: '${expression}'. The last step of the path must ` +
        `be a key (\`.name\` or \`['name']\`) or an array index (\`[2]\`), not a wildcard, filter, ` +
        `slice or \`..\`.`,
    );
  if (path.endsWith("]")) {
    const open = lastTopLevelBracket(path);
    const inner = path.slice(open + 1, -1).trim();
    const parent = path.slice(0, open);
    if (parent.endsWith("..") || parent === "") throw unsupported();
    if (/^\d+$/.test(inner)) return { parent, last: { kind: "index", index: Number(inner) } };
    const quoted = /^(['"])(.*)\1$/s.exec(inner);
    if (quoted) {
      return { parent, last: { kind: "key", key: quoted[2].replace(/\\(.)/g, "$1") } };
    }
    throw unsupported();
  }
  const dot = lastTopLevelDot(path);
  if (dot <= 0) throw unsupported();
  const key = path.slice(dot + 1);
  const parent = path.slice(0, dot);
  if (key === "" || key === "*" || parent.endsWith(".") || /[\s()?@*,:]/.test(key)) {
    throw unsupported();
  }
  return { parent, last: { kind: "key", key } };
}

/** `$.a['b c'][0]`: a path as JSONPath text, for messages. */
export function formatPath(path: readonly Segment[]): string {
  return "$" +
    path.map((s) =>
      typeof s === "number"
        ? `[${s}]`
        : /^[A-Za-z_$][\w$]*$/.test(s)
        ? `.${s}`
        : `['${s.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}']`
    ).join("");
}

function invalidExpression(expression: string, reason: string): FileToolError {
  return new FileToolError(
    `Invalid JSONPath expression '${expression}': ${reason}. Examples of valid paths: ` +
      "`$.name`, `$.users[0].email`, `$.items[*].price`, `$.users[?(@.age > 30)]`.",
  );
}

// A structural problem jsonpath-plus would silently ignore, or null.
function syntaxProblem(expression: string): string | null {
  const path = expression.trim();
  if (!path.startsWith("$")) return "it must start with `$` (the document root)";
  const open: string[] = [];
  let quote: string | null = null;
  for (let i = 0; i < path.length; i++) {
    const c = path[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "[" || c === "(") open.push(c);
    else if (c === "]" || c === ")") {
      if (open.pop() !== (c === "]" ? "[" : "(")) return `unbalanced \`${c}\` at position ${i + 1}`;
    }
  }
  if (quote) return "a quoted name is not closed";
  if (open.length > 0) return `\`${open[open.length - 1]}\` is not closed`;
  if (path.endsWith(".")) return "it ends with `.`";
  if (/\[\s*\]/.test(path)) return "it has empty brackets `[]`";
  return null;
}

// Calls `visit` for every character outside quotes, with the bracket depth before it.
function scanTopLevel(path: string, visit: (c: string, i: number, depth: number) => void): void {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < path.length; i++) {
    const c = path[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      continue;
    }
    visit(c, i, depth);
    if (c === "[" || c === "(") depth++;
    else if (c === "]" || c === ")") depth--;
  }
}

// Index of the `[` that opens the path's final bracketed step.
function lastTopLevelBracket(path: string): number {
  let last = -1;
  scanTopLevel(path, (c, i, depth) => {
    if (c === "[" && depth === 0) last = i;
  });
  return last;
}

// Index of the last `.` outside brackets and quotes, or -1.
function lastTopLevelDot(path: string): number {
  let last = -1;
  scanTopLevel(path, (c, i, depth) => {
    if (c === "." && depth === 0) last = i;
  });
  return last;
}

// The segments of a JSON pointer, with array indices as numbers; null if not a real member.
function resolvePointer(data: unknown, pointer: string): Segment[] | null {
  if (pointer === "") return [];
  const path: Segment[] = [];
  let node = data;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(node)) {
      if (!/^\d+$/.test(key) || Number(key) >= node.length) return null;
      path.push(Number(key));
      node = node[Number(key)];
    } else if (node !== null && typeof node === "object" && Object.hasOwn(node, key)) {
      path.push(key);
      node = (node as Record<string, unknown>)[key];
    } else {
      return null;
    }
  }
  return path;
}
