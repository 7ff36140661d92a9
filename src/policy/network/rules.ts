/**
 * The network list's rules: what one `network.allow` / `network.deny` entry means, and whether a
 * destination (a host as the client named it, and a port) is allowed by a list. Pure: the proxy
 * (proxy.ts) asks it twice, once for the name the client asked for and once for the address the
 * name resolved to (addresses.ts says which addresses need their own entry).
 *
 * An entry is a string, or `{host, reason}` with the same string as `host`:
 * - `example.com`: that host exactly; `*.example.com`: every name below it (not itself);
 * - `203.0.113.7`, `[2001:db8::1]`: that address (IPv6 only in brackets);
 * - any of them with `:PORT`; without one, an allow entry means ports 80 and 443, a deny entry
 *   every port.
 */
import { isIP } from "node:net";

/** One entry as written in the config. */
export type NetworkEntryInput = string | { host: string; reason?: string };

/** Where an entry came from, as `deft config` shows it (a file's path). */
export interface NetworkEntry {
  /** The entry as written (`*.example.com:443`). */
  text: string;
  /** `name` (exact), `suffix` (`*.x`: names below x) or `address` (an IP literal). */
  kind: "name" | "suffix" | "address";
  /** Lower-case name, the suffix without `*.`, or the address in its usual form. */
  host: string;
  /** The port, or undefined for the default (allow: 80 and 443; deny: every port). */
  port?: number;
  reason?: string;
  /** The file the entry came from. */
  source?: string;
}

/** The list in force: deny wins over allow. */
export interface NetworkList {
  allow: NetworkEntry[];
  deny: NetworkEntry[];
}

/** The ports an allow entry without `:PORT` stands for. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/** An entry that cannot be read; the message says what is wrong and what to write instead. */
export class NetworkEntryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NetworkEntryError";
  }
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Reads one entry; throws `NetworkEntryError` with the reason. */
export function parseEntry(input: NetworkEntryInput, source?: string): NetworkEntry {
  const text = typeof input === "string" ? input : input.host;
  const reason = typeof input === "string" ? undefined : input.reason;
  const shown = JSON.stringify(text);
  if (text.trim() !== text || text === "") {
    throw new NetworkEntryError(`${shown} is empty or has spaces around it; write a host name`);
  }
  if (text.includes("/") || text.includes("@") || text.includes("?")) {
    throw new NetworkEntryError(
      `${shown} looks like a URL; write only the host (and :port), e.g. "pypi.org" or ` +
        `"files.pythonhosted.org:443"`,
    );
  }
  let hostPart = text;
  let port: number | undefined;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) throw new NetworkEntryError(`${shown}: an IPv6 address needs its closing "]"`);
    hostPart = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (isIP(hostPart) !== 6) {
      throw new NetworkEntryError(`${shown}: only IPv6 addresses go in brackets`);
    }
    if (rest !== "") {
      if (!rest.startsWith(":")) throw new NetworkEntryError(`${shown}: write [ADDRESS]:PORT`);
      port = parsePort(rest.slice(1), shown);
    }
    return { text, kind: "address", host: normalAddress(hostPart), port, reason, source };
  }
  const colons = text.split(":").length - 1;
  if (colons > 1) {
    throw new NetworkEntryError(
      `${shown}: an IPv6 address must be written in brackets, e.g. "[${text}]" or ` +
        `"[${text}]:443"`,
    );
  }
  if (colons === 1) {
    const at = text.lastIndexOf(":");
    hostPart = text.slice(0, at);
    port = parsePort(text.slice(at + 1), shown);
  }
  if (isIP(hostPart) === 4) {
    return { text, kind: "address", host: normalAddress(hostPart), port, reason, source };
  }
  const lower = hostPart.toLowerCase();
  const wildcard = lower.startsWith("*.");
  const name = wildcard ? lower.slice(2) : lower;
  if (name.includes("*")) {
    throw new NetworkEntryError(
      `${shown}: a wildcard may only start the name, as "*.example.com" (every name below it)`,
    );
  }
  const labels = name.split(".");
  if (name.length > 253 || !labels.every((l) => LABEL.test(l))) {
    throw new NetworkEntryError(
      `${shown} is not a host name: use letters, digits, "-" and dots, e.g. "pypi.org"`,
    );
  }
  if (/^[0-9.]+$/.test(name)) {
    throw new NetworkEntryError(`${shown} is not a valid IPv4 address`);
  }
  if (wildcard && labels.length < 2) {
    throw new NetworkEntryError(
      `${shown} would match a whole top-level domain; name a domain, as "*.example.com"`,
    );
  }
  return { text, kind: wildcard ? "suffix" : "name", host: name, port, reason, source };
}

function parsePort(text: string, shown: string): number {
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw new NetworkEntryError(`${shown}: the port must be a number from 1 to 65535`);
  }
  return port;
}

/** An IP address in one canonical form (IPv6 lower case, fully expanded), for comparing. */
export function normalAddress(address: string): string {
  if (isIP(address) !== 6) return address;
  let head = address.toLowerCase();
  let tail: string[] = [];
  // An IPv4 tail (`::ffff:1.2.3.4`) becomes two groups.
  const v4 = head.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const [a, b, c, d] = v4[1].split(".").map(Number);
    head = head.slice(0, -v4[1].length) +
      `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left, right] = head.split("::");
  const groups = left ? left.split(":") : [];
  tail = right !== undefined ? (right ? right.split(":") : []) : [];
  const fill = right !== undefined ? 8 - groups.length - tail.length : 0;
  return [...groups, ...Array(fill).fill("0"), ...tail]
    .map((g) => g.padStart(4, "0")).join(":");
}

/** The destination's host in the form entries are compared in. */
export function destinationHost(host: string): { host: string; address: boolean } {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (isIP(bare)) return { host: normalAddress(bare), address: true };
  return { host: bare.toLowerCase().replace(/\.$/, ""), address: false };
}

function matches(entry: NetworkEntry, host: string, address: boolean, port: number, deny: boolean) {
  const portOk = entry.port !== undefined
    ? entry.port === port
    : deny || DEFAULT_PORTS.includes(port);
  if (!portOk) return false;
  if (entry.kind === "address") return address && entry.host === host;
  if (address) return false;
  if (entry.kind === "name") return entry.host === host;
  return host.endsWith(`.${entry.host}`);
}

/** What the list says about one destination. */
export type ListDecision =
  | { allowed: true; entry: NetworkEntry }
  | { allowed: false; entry?: NetworkEntry; reason: string };

/**
 * Whether `list` allows `host` (a name or an IP literal, IPv6 with or without brackets) at
 * `port`. Deny wins; the reason is the one the console and the 403 show.
 */
export function decideByList(list: NetworkList, host: string, port: number): ListDecision {
  const dest = destinationHost(host);
  const denied = list.deny.find((e) => matches(e, dest.host, dest.address, port, true));
  if (denied) {
    return {
      allowed: false,
      entry: denied,
      reason: `denied by "${denied.text}"${denied.reason ? `: ${denied.reason}` : ""}`,
    };
  }
  const allowed = list.allow.find((e) => matches(e, dest.host, dest.address, port, false));
  if (allowed) return { allowed: true, entry: allowed };
  const samehost = list.allow.find((e) =>
    matches({ ...e, port: port }, dest.host, dest.address, port, false)
  );
  if (samehost) {
    return {
      allowed: false,
      reason: `port ${port} not allowed ("${samehost.text}" allows ` +
        `${samehost.port ?? DEFAULT_PORTS.join(" and ")})`,
    };
  }
  return { allowed: false, reason: "not in allow list" };
}
