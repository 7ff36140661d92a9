/**
 * Names of MCP tools inside Deft. A remote tool joins the registry as `mcp__<server>__<tool>`:
 * no built-in tool starts with `mcp`, so the prefix cannot clash with one, and the name stays
 * within what every provider accepts (`[a-zA-Z0-9_-]`, at most 64 characters).
 */
import { normalizeToolName } from "../tools/executor.ts";

/** Longest tool name OpenAI, Anthropic and Gemini all accept. */
export const MAX_TOOL_NAME_LENGTH = 64;

const PREFIX = "mcp__";
const SEPARATOR = "__";

/**
 * The Deft name of remote tool `tool` on server `server`. `taken` holds the names already given
 * (as normalised by the executor, which ignores case and underscores); a name that would collide
 * with one of them, or that had to be shortened, gets a short hash of the original names instead,
 * so two remote tools never end up behind one Deft name. The chosen name is added to `taken`.
 *
 * @example
 * ```ts
 * const taken = new Set<string>();
 * mcpToolName("git hub", "create.issue", taken); // "mcp__git_hub__create_issue"
 * ```
 */
export function mcpToolName(server: string, tool: string, taken: Set<string>): string {
  const base = `${PREFIX}${sanitize(server)}${SEPARATOR}${sanitize(tool)}`;
  let name = base;
  if (name.length > MAX_TOOL_NAME_LENGTH || taken.has(normalizeToolName(name))) {
    const digest = hash(`${server}\u0000${tool}`);
    for (let n = 1; n === 1 || taken.has(normalizeToolName(name)); n++) {
      const suffix = n === 1 ? `_${digest}` : `_${digest}_${n}`;
      name = base.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
    }
  }
  taken.add(normalizeToolName(name));
  return name;
}

function sanitize(part: string): string {
  const clean = part.replace(/[^a-zA-Z0-9_-]/g, "_");
  return clean === "" ? "_" : clean;
}

/** FNV-1a, 32 bits, as 8 hex digits: short, stable across runs, and enough to tell names apart. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
