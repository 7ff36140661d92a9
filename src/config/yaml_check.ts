/**
 * The YAML of a config file read with its bounds (size, syntax, repeated keys, alias bombs,
 * depth), and the wording of where a key sits and what is wrong with it, for load.ts's messages.
 */
import { type Document, isMap, isScalar, LineCounter, parseDocument, visit } from "./yaml.ts";
import type { z } from "zod";
import { ConfigError } from "./errors.ts";
import { MAX_CONFIG_BYTES } from "./read.ts";
import { nestingDepth } from "../tools/nesting.ts";

/** Deepest nesting a config may have (the real ones nest four levels). */
const MAX_CONFIG_DEPTH = 64;
/** Aliases a config may expand; more is an alias bomb, not a configuration. */
const MAX_ALIAS_COUNT = 100;

/** The YAML of a config file, checked for size, syntax, repeated keys, alias bombs and depth. */
export function parseYaml(
  text: string,
  path: string,
): { doc: Document; lineCounter: LineCounter; data: unknown } {
  const size = new TextEncoder().encode(text).length;
  if (size > MAX_CONFIG_BYTES) {
    throw new ConfigError(
      `${path}: the config file is ${size} bytes, over the limit of ${MAX_CONFIG_BYTES}; a ` +
        `configuration is a few kilobytes (see config.example.yaml).`,
    );
  }
  const lineCounter = new LineCounter();
  let doc: Document;
  let data: unknown;
  try {
    // Unique keys are checked below in one pass; the parser's own check is quadratic.
    doc = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: true });
    if (doc.errors.length > 0) {
      const e = doc.errors[0];
      const at = e.linePos?.[0] ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : "";
      const message = firstLine(e.message).replace(/ at line \d+, column \d+:?$/, "");
      if (/call stack/i.test(message)) throw new RangeError(message);
      throw new ConfigError(`${path}: invalid YAML${at}: ${message}`);
    }
    const duplicate = duplicateKey(doc, lineCounter);
    if (duplicate) throw new ConfigError(`${path}: invalid YAML${duplicate}`);
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) ?? {};
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    if (e instanceof ReferenceError && /alias/i.test(e.message)) {
      throw new ConfigError(
        `${path}: its YAML aliases (*name) expand to too much data (over ${MAX_ALIAS_COUNT} ` +
          `expansions; an "alias bomb"). Write the values out, or use fewer aliases.`,
      );
    }
    if (e instanceof RangeError) throw tooDeep(path);
    throw new ConfigError(`${path}: cannot be read as YAML: ${(e as Error).message}`);
  }
  if (nestingDepth(data, MAX_CONFIG_DEPTH) > MAX_CONFIG_DEPTH) throw tooDeep(path);
  return { doc, lineCounter, data };
}

/** Where `keyPath` sits in `doc`, as " (line L, column C)"; "" when nowhere. */
export function position(doc: Document, lineCounter: LineCounter, keyPath: PropertyKey[]): string {
  // A missing key has no node: point at the nearest enclosing one that exists.
  for (let n = keyPath.length; n >= 0; n--) {
    const found = nodePosition(doc, lineCounter, keyPath.slice(0, n));
    if (found) return found;
  }
  return "";
}

function nodePosition(
  doc: Document,
  lineCounter: LineCounter,
  keyPath: PropertyKey[],
): string | undefined {
  // Point at the key when the path names one, else at the value.
  const parentPath = keyPath.slice(0, -1);
  const last = keyPath[keyPath.length - 1];
  const parent = parentPath.length ? doc.getIn(parentPath as unknown[], true) : doc.contents;
  let offset: number | undefined;
  if (isMap(parent) && last !== undefined) {
    const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
    const key = pair?.key as { range?: [number, number] } | undefined;
    offset = key?.range?.[0];
  }
  if (offset === undefined) {
    const node = doc.getIn(keyPath as unknown[], true) as { range?: [number, number] } | undefined;
    offset = node?.range?.[0];
  }
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return ` (line ${line}, column ${col})`;
}

/** What is wrong with a value, in the words of a config message. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_value") {
    return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  }
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) {
    return `is required (${issue.expected})`;
  }
  return issue.message.replace(/^Invalid input: /, "");
}

/** Removes the key at `keyPath` from parsed YAML data (an unknown key, once warned about). */
export function deleteAt(data: unknown, keyPath: PropertyKey[]): void {
  let node = data as Record<PropertyKey, unknown>;
  for (const key of keyPath.slice(0, -1)) node = node?.[key] as Record<PropertyKey, unknown>;
  if (node) delete node[keyPath[keyPath.length - 1]];
}

function tooDeep(path: string): ConfigError {
  return new ConfigError(
    `${path}: nests more than ${MAX_CONFIG_DEPTH} levels deep; a configuration nests a few ` +
      `levels (see config.example.yaml).`,
  );
}

// The first key repeated within one mapping, as " at line L, column C: ..." (one linear pass).
function duplicateKey(doc: Document, lineCounter: LineCounter): string | undefined {
  let found: string | undefined;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? pair.key.value : String(pair.key);
        if (!seen.has(key)) {
          seen.add(key);
          continue;
        }
        const offset = (pair.key as { range?: [number, number] } | null)?.range?.[0];
        const at = offset === undefined ? "" : (() => {
          const { line, col } = lineCounter.linePos(offset);
          return ` at line ${line}, column ${col}`;
        })();
        found = `${at}: Map keys must be unique ('${String(key)}' appears twice)`;
        return visit.BREAK;
      }
    },
  });
  return found;
}

function firstLine(text: string): string {
  return text.split("\n")[0];
}
