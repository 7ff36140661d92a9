/**
 * The evaluator Deft hands jsonpath-plus for filter and script expressions. It parses with
 * jsonpath-plus's own "safe" evaluator (a jsep syntax tree, never JavaScript) and, before anything
 * runs, refuses what could hang or exhaust memory: calls of any method outside a short allow-list
 * of linear string helpers (so no `match` with a catastrophic regular expression, no `padEnd` or
 * `repeat` building a huge string), regular-expression literals, assignments, and the names that
 * lead to constructors and prototypes. Comparisons, `&&`/`||`, arithmetic and string equality keep
 * working. The tool host's per-call deadline remains the backstop for anything else.
 */
import { JSONPath } from "jsonpath-plus";

/** Methods a filter may call: each runs in time linear in its string and allocates at most that. */
export const ALLOWED_FILTER_METHODS: ReadonlySet<string> = new Set([
  "includes",
  "startsWith",
  "endsWith",
  "indexOf",
  "lastIndexOf",
  "toLowerCase",
  "toUpperCase",
  "trim",
  "trimStart",
  "trimEnd",
  "at",
  "charAt",
]);

const FORBIDDEN_NAMES = new Set(["constructor", "prototype", "__proto__", "__defineGetter__"]);

/** Most nodes a filter's syntax tree may have; a longer filter is not a query anyone writes. */
const MAX_NODES = 10_000;

interface AstNode {
  type: string;
  [key: string]: unknown;
}

interface SafeScriptLike {
  ast: unknown;
  runInNewContext(context: object): unknown;
}

type SafeScriptClass = new (code: string) => SafeScriptLike;

const SafeScript =
  (JSONPath as unknown as { prototype: { safeVm: { Script: SafeScriptClass } } }).prototype
    .safeVm.Script;

/** Thrown (and reported by jsonpath-plus with the expression) when a filter is refused. */
export class RefusedFilterError extends Error {}

/**
 * The `eval` option for jsonpath-plus: compiles a filter with the safe evaluator after checking
 * its syntax tree. Throws `RefusedFilterError` saying what is not allowed.
 */
export class GuardedScript {
  readonly #script: SafeScriptLike;

  constructor(code: string) {
    this.#script = new SafeScript(code);
    checkTree(this.#script.ast);
  }

  runInNewContext(context: object): unknown {
    return this.#script.runInNewContext(context);
  }
}

// Walks the tree with an explicit stack (no recursion, so a deeply nested filter cannot overflow).
function checkTree(root: unknown): void {
  const stack: unknown[] = [root];
  let seen = 0;
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (node === null || typeof node !== "object") continue;
    if (++seen > MAX_NODES) {
      throw new RefusedFilterError(`the filter is too long (over ${MAX_NODES} terms)`);
    }
    const n = node as AstNode;
    switch (n.type) {
      case "CallExpression":
        checkCall(n);
        break;
      case "AssignmentExpression":
      case "UpdateExpression":
        throw new RefusedFilterError("a filter may not assign; compare values instead");
      case "Literal":
        if (n.value instanceof RegExp) {
          throw new RefusedFilterError(
            "regular expressions are not allowed in filters; use `includes`, `startsWith`, " +
              "`endsWith` or `==`",
          );
        }
        break;
      case "Identifier":
        if (FORBIDDEN_NAMES.has(n.name as string)) throw forbiddenName(n.name as string);
        break;
      case "MemberExpression":
        if (
          n.computed && (n.property as AstNode)?.type === "Literal" &&
          FORBIDDEN_NAMES.has(String((n.property as AstNode).value))
        ) throw forbiddenName(String((n.property as AstNode).value));
        break;
    }
    for (const [key, value] of Object.entries(n)) {
      if (key !== "type" && value !== null && typeof value === "object") stack.push(value);
    }
  }
}

function checkCall(node: AstNode): void {
  const callee = node.callee as AstNode;
  const name = callee?.type === "MemberExpression" && !callee.computed
    ? (callee.property as AstNode).name as string
    : undefined;
  if (name === undefined || !ALLOWED_FILTER_METHODS.has(name)) {
    const shown = name ?? (callee?.type === "Identifier" ? callee.name as string : undefined);
    throw new RefusedFilterError(
      `${shown ? `calling \`${shown}\`` : "calling a computed function"} is not allowed in a ` +
        `filter; filters may compare values ` +
        `(==, !=, <, >, &&, ||, arithmetic) and call only ` +
        [...ALLOWED_FILTER_METHODS].map((m) => `\`${m}\``).join(", "),
    );
  }
}

function forbiddenName(name: string): RefusedFilterError {
  return new RefusedFilterError(`\`${name}\` is not allowed in a filter`);
}
