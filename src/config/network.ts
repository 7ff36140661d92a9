/**
 * The `network:` section: which hosts the sandboxed shell may reach through Deft's proxy
 * (`allow`, `deny`; deny wins; no section: no network). Entries are checked strictly here
 * (policy/network/rules.ts says what each form means), and each keeps the file it came from, for
 * `deft config`. A repository's own config, in a folder that is not trusted, may narrow the
 * user's list and never widen it: its `deny` entries are added, and its `allow` entries replace
 * the user's only where one of the user's entries already covers each of them.
 */
import { z } from "zod";
import {
  DEFAULT_PORTS,
  type NetworkEntry,
  NetworkEntryError,
  type NetworkList,
  parseEntry,
} from "../policy/network/rules.ts";

export type { NetworkEntry, NetworkList };

/**
 * `schema` with every key it does not know an error, not the loader's usual warning: a misspelt
 * `deny` must not pass for an empty one.
 */
function noOtherKeys<T extends z.ZodRawShape>(shape: T, what: string) {
  return z.looseObject(shape).superRefine((value, ctx) => {
    for (const key of Object.keys(value)) {
      if (key in shape) continue;
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `unknown key in ${what}; use ${Object.keys(shape).join(" or ")}`,
      });
    }
  });
}

const entrySchema = z.union([
  z.string(),
  noOtherKeys({ host: z.string(), reason: z.string().max(500).optional() }, "a network entry"),
]).transform((input, ctx) => {
  try {
    return parseEntry(input as string | { host: string; reason?: string });
  } catch (e) {
    if (!(e instanceof NetworkEntryError)) throw e;
    ctx.addIssue({ code: "custom", message: e.message });
    return z.NEVER;
  }
});

/** The `network` section's schema: lists of entries, read into `NetworkList`. */
export const networkSchema = noOtherKeys({
  allow: z.array(entrySchema).max(1000).default([]),
  deny: z.array(entrySchema).max(1000).default([]),
}, "network").transform(({ allow, deny }) => ({ allow, deny }));

/** `list` with every entry marked as coming from `source`. */
export function fromFile(list: NetworkList, source: string | undefined): NetworkList {
  const mark = (e: NetworkEntry) => ({ ...e, source: e.source ?? source });
  return { allow: list.allow.map(mark), deny: list.deny.map(mark) };
}

/**
 * The user's list narrowed by an untrusted repository's section: the repository's denials are
 * added; when it has an allow list, only its entries that one of the user's covers are kept,
 * and they replace the user's. Returns the list and the repository's entries that were dropped.
 */
export function narrowedBy(
  user: NetworkList | undefined,
  repository: NetworkList,
): { list: NetworkList; dropped: NetworkEntry[] } {
  const allow = user?.allow ?? [];
  const deny = [...(user?.deny ?? []), ...repository.deny];
  if (repository.allow.length === 0) return { list: { allow, deny }, dropped: [] };
  const kept = repository.allow.filter((r) => allow.some((u) => covers(u, r)));
  const dropped = repository.allow.filter((r) => !kept.includes(r));
  return { list: { allow: kept, deny }, dropped };
}

/** True when everything `inner` allows, `outer` allows too. */
export function covers(outer: NetworkEntry, inner: NetworkEntry): boolean {
  const ports = (e: NetworkEntry) => e.port === undefined ? DEFAULT_PORTS : [e.port];
  if (!ports(inner).every((p) => ports(outer).includes(p))) return false;
  if (outer.kind === "address" || inner.kind === "address") {
    return outer.kind === inner.kind && outer.host === inner.host;
  }
  if (outer.kind === "name") return inner.kind === "name" && inner.host === outer.host;
  return inner.host.endsWith(`.${outer.host}`) ||
    (inner.kind === "suffix" && inner.host === outer.host);
}

/** The list as `deft config` shows it: each entry, its reason and where it came from. */
export function networkForDisplay(list: NetworkList | undefined): unknown {
  if (!list) return "none (no network; set network.allow to allow hosts)";
  const show = (e: NetworkEntry) => ({
    entry: e.text,
    ...(e.reason ? { reason: e.reason } : {}),
    from: e.source ?? "(unknown)",
  });
  return { allow: list.allow.map(show), deny: list.deny.map(show) };
}

/**
 * What the list in force applies to, for `deft config`: the sandboxed shell and what it starts,
 * the stdio MCP servers Deft starts in that sandbox, a container Deft starts, `web_fetch`; and
 * what it does not: `sandbox: none`, and the stdio servers that run outside (their entry's
 * `sandbox: none`, or no sandbox for the session), with the user's network. Servers reached over
 * HTTP are not started by Deft and not listed. `hooks`: each configured hook's `sandbox` (the
 * sandboxed ones take the shell's network). Undefined without a list.
 */
export function networkScope(
  list: NetworkList | undefined,
  sandbox: string | undefined,
  mcpServers: Readonly<Record<string, { command?: string; sandbox?: string }>>,
  hooks: readonly (string | undefined)[] = [],
): unknown {
  if (!list) return undefined;
  const session = sandbox ?? "none";
  const stdio = Object.entries(mcpServers).filter(([, s]) => s.command);
  const outside = stdio.filter(([, s]) => (s.sandbox ?? session) === "none").map(([n]) => n);
  const inside = stdio.filter(([, s]) => (s.sandbox ?? session) !== "none").map(([n]) => n);
  const hooksOutside = hooks.filter((h) => h === "none").length;
  const hooksInside = hooks.length - hooksOutside;
  const notEnforced: string[] = [];
  if (session === "none") {
    notEnforced.push(
      `the shell${hooksInside > 0 ? " and the hooks" : ""}: sandbox is none, so ` +
        `${hooksInside > 0 ? "they have" : "it has"} your whole network`,
    );
  }
  if (outside.length > 0) {
    notEnforced.push(
      `MCP servers (${outside.join(", ")}): they run outside the sandbox, with your whole ` +
        "network; the list does not reach them",
    );
  }
  if (hooksOutside > 0) {
    notEnforced.push(
      `hooks with sandbox: none (${hooksOutside}): they run outside the sandbox, with your whole ` +
        "network; the list does not reach them",
    );
  }
  return {
    enforced_for: [
      ...(session === "none"
        ? []
        : ["the sandboxed shell and everything it starts (its own network namespace)"]),
      ...(inside.length > 0
        ? [`MCP servers (${inside.join(", ")}): they run sandboxed, like the shell`]
        : []),
      ...(session !== "none" && hooksInside > 0
        ? [`hooks (${hooksInside}): they run sandboxed, like the shell`]
        : []),
      "a container Deft starts (--network none, Deft's proxy bound in)",
      "web_fetch",
    ],
    ...(notEnforced.length ? { not_enforced_for: notEnforced } : {}),
  };
}
