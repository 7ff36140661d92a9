/**
 * How deeply a tool call's arguments may nest. Structured cloning (the hand-off to the tool
 * worker), JSON serialisation and schema validation all recurse, so a value nested thousands of
 * levels deep would overflow the stack somewhere down the line; it is refused up front instead,
 * with a check that itself never recurses.
 */

/** Deepest nesting of arrays and objects that tool arguments may have. */
export const MAX_ARGUMENT_DEPTH = 512;

/**
 * The nesting depth of `value` (0 for a scalar, 1 for `{}` or `[]`), counted without recursion;
 * stops counting once `limit` is passed and returns `limit + 1`.
 * @example nestingDepth({ a: [1] }) // 2
 */
export function nestingDepth(value: unknown, limit = MAX_ARGUMENT_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    const inner = depth + 1;
    if (inner > deepest) deepest = inner;
    if (deepest > limit) return limit + 1;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === "object") stack.push([child, inner]);
    }
  }
  return deepest;
}

/** The error a call gets when its arguments nest deeper than the limit, or null. */
export function nestingProblem(args: unknown): string | null {
  if (nestingDepth(args) <= MAX_ARGUMENT_DEPTH) return null;
  return `the arguments nest more than ${MAX_ARGUMENT_DEPTH} levels deep (arrays and objects ` +
    `inside each other); send a flatter value, or write it to a file with bash and work on that`;
}
