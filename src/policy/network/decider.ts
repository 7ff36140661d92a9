/**
 * The one decision on a destination, shared by the HTTP proxy (proxy.ts) and the SOCKS5 server
 * (socks.ts): the name is checked against the list (rules.ts, deny wins), resolved here (the
 * resolver is injectable, for tests), and the address it will connect to is checked again
 * (addresses.ts): loopback, private, link-local and metadata addresses only when the allow list
 * names that address itself. The caller connects to the address decided, never to the name
 * again, so an answer that changes between the check and the connection (DNS rebinding) changes
 * nothing. Every decision is reported (host and port only) and has its span.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { withSpan } from "../../telemetry/tracing.ts";
import { specialAddress } from "./addresses.ts";
import { decideByList, destinationHost, type NetworkList } from "./rules.ts";

/** Resolves a host name to its addresses (IPv4 and IPv6, in preference order). */
export type Resolver = (name: string) => Promise<string[]>;

/** One destination the proxy allowed or refused: host and port only, never a path. */
export interface NetworkDecision {
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused (`not in allow list`), or the allow entry that let it through. */
  reason: string;
  /** The address connected to (allowed), when there was one. */
  address?: string;
}

/** What a decision needs: the list, how names resolve, who is told. */
export interface DecisionOptions {
  list: NetworkList;
  /** Name resolution (default: the system's, `/etc/hosts` included). */
  resolve?: Resolver;
  /** Told of every decision, allowed or not. */
  onDecision?: (decision: NetworkDecision) => void;
  /** Milliseconds a name may take to resolve (default 10 s). */
  resolveMs?: number;
}

/** A destination to connect to, or why not. */
export type Verdict =
  | { allowed: true; host: string; port: number; address: string }
  | { allowed: false; host: string; port: number; reason: string };

/** Milliseconds a name may take to resolve. */
const RESOLVE_MS = 10_000;

/** The system's resolver: every address of `name`, as getaddrinfo gives them. */
export const systemResolver: Resolver = async (name) =>
  (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);

/** Checks destinations against the list and the addresses they resolve to. */
export class Decider {
  constructor(private readonly options: DecisionOptions) {}

  /** The verdict on `host:port`, reported and traced. */
  decide(host: string, port: number): Promise<Verdict> {
    return this.#traced(host, port, () => this.#decide(host, port));
  }

  /**
   * Records a request refused before any destination was decided (a SOCKS5 command that is not
   * offered): reported and traced like every decision.
   */
  refuse(host: string, port: number, reason: string): Promise<Verdict> {
    return this.#traced(host, port, () => Promise.resolve({ allowed: false, host, port, reason }));
  }

  #traced(host: string, port: number, decide: () => Promise<Verdict>): Promise<Verdict> {
    // One span per destination asked for: host and port, whether it went, never a path.
    return withSpan("deft.network", {
      "server.address": host,
      "server.port": port,
    }, async (span) => {
      const verdict = await decide();
      this.options.onDecision?.(
        verdict.allowed
          ? { host, port, allowed: true, reason: "allowed", address: verdict.address }
          : { host, port, allowed: false, reason: verdict.reason },
      );
      span.set({ "deft.network.allowed": verdict.allowed });
      if (!verdict.allowed) {
        span.set({ "deft.network.reason": verdict.reason });
        span.fail("blocked");
      }
      return verdict;
    });
  }

  async #decide(host: string, port: number): Promise<Verdict> {
    const refuse = (reason: string): Verdict => ({ allowed: false, host, port, reason });
    const { list } = this.options;
    const byName = decideByList(list, host, port);
    if (!byName.allowed) return refuse(byName.reason);
    const dest = destinationHost(host);
    let addresses: string[];
    if (dest.address) addresses = [host.replace(/^\[|\]$/g, "")];
    else {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error("timed out")),
            this.options.resolveMs ?? RESOLVE_MS,
          );
        });
        addresses = await Promise.race([
          (this.options.resolve ?? systemResolver)(dest.host),
          timeout,
        ]);
      } catch {
        return refuse("the name does not resolve");
      } finally {
        clearTimeout(timer);
      }
    }
    let firstRefusal: string | undefined;
    for (const address of addresses) {
      if (isIP(address) === 0) continue;
      const special = specialAddress(address);
      if (!special) return { allowed: true, host, port, address };
      // A special address passes only when the list names that very address.
      const byAddress = decideByList(
        { allow: list.allow.filter((e) => e.kind === "address"), deny: list.deny },
        address,
        port,
      );
      if (byAddress.allowed) return { allowed: true, host, port, address };
      firstRefusal ??= `resolves to ${address}, ${special}; allow "${
        isIP(address) === 6 ? `[${address}]` : address
      }:${port}" to reach it`;
    }
    return refuse(firstRefusal ?? "the name has no address");
  }
}

/** `host:port` of a CONNECT, IPv6 only in brackets; undefined when malformed. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const m = authority.match(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  if (m[1].startsWith("[") && isIP(m[1].slice(1, -1)) !== 6) return undefined;
  return { host: m[1], port };
}
