/**
 * The network proxy's decisions, given to the tool call that caused them, for the front ends
 * that answer call by call (`deft serve`, `deft mcp`): each result then carries the destinations
 * decided while its tool ran (`ResultRecord.network`: host, port, allowed, reason; never a path).
 *
 * One proxy serves every sandboxed process of a Deft process, so a decision names no call. It is
 * given to one call at most, by where it can have come from:
 * 1. a running `web_fetch` whose URL names that host and port (it fetches in this process);
 * 2. else the running call of a tool that holds the shell (`bash`): the shell runs one command at
 *    a time, in the order the calls reached the tool, so the oldest such call is the one running;
 * 3. else the one call running, when exactly one is;
 * anything else (a background shell's connection while no call runs, two unrelated calls at
 * once) is given to no call: the front end still shows it (`onDecision`).
 */
import { onNetworkDecision } from "../policy/network/decisions.ts";
import type { NetworkDecision } from "../policy/network/proxy.ts";
import type { Tool, ToolExecResult } from "./base.ts";
import { catalogEntry } from "./catalog.ts";

/** One destination decided during a call: host and port only. */
export interface CallNetworkDecision {
  host: string;
  port: number;
  allowed: boolean;
  reason: string;
}

/** Most decisions one result carries; past it, the last entry says how many more there were. */
const MAX_PER_CALL = 200;

interface Running {
  decisions: CallNetworkDecision[];
  dropped: number;
  /** `host:port` a web_fetch call's URL names. */
  fetches?: string;
  shell: boolean;
}

/**
 * Gives `tools`' results the network decisions of their calls (see above), by wrapping each
 * tool's `execute`. `onDecision` hears every decision, with whether a call got it. Returns the
 * function that stops listening (the tools stay wrapped, and carry nothing more).
 */
export function recordCallNetwork(
  tools: readonly Tool[],
  onDecision?: (decision: CallNetworkDecision, given: boolean) => void,
): () => void {
  const running: Running[] = [];
  for (const tool of tools) {
    const execute = tool.execute.bind(tool);
    const shell = catalogEntry(tool.name)?.holdsShell === true;
    const fetching = tool.name === "web_fetch";
    tool.execute = async (args, plan): Promise<ToolExecResult> => {
      const call: Running = {
        decisions: [],
        dropped: 0,
        shell,
        fetches: fetching ? fetchTarget(args.url) : undefined,
      };
      running.push(call);
      let result: ToolExecResult;
      try {
        result = await execute(args, plan);
      } finally {
        running.splice(running.indexOf(call), 1);
      }
      if (call.decisions.length === 0) return result;
      const network = [...call.decisions];
      if (call.dropped > 0) {
        network.push({
          host: "",
          port: 0,
          allowed: false,
          reason: `${call.dropped} more not kept`,
        });
      }
      return { ...result, record: { ...result.record, network } };
    };
  }
  return onNetworkDecision((d: NetworkDecision) => {
    const decision = { host: d.host, port: d.port, allowed: d.allowed, reason: d.reason };
    const call = callOf(running, `${d.host.toLowerCase()}:${d.port}`);
    if (call) {
      if (call.decisions.length < MAX_PER_CALL) call.decisions.push(decision);
      else call.dropped++;
    }
    onDecision?.(decision, call !== undefined);
  });
}

function callOf(running: Running[], where: string): Running | undefined {
  return running.find((c) => c.fetches === where) ??
    running.find((c) => c.shell) ??
    (running.length === 1 ? running[0] : undefined);
}

/** `host:port` of a URL the way the proxy names it (IPv6 in brackets, lower case), or undefined. */
function fetchTarget(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === "https:" ? "443" : "80");
    return `${u.hostname}:${port}`;
  } catch {
    return undefined;
  }
}
