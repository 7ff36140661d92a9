/**
 * The stderr line of a front end without a console (`deft serve`, `deft mcp`) for each network
 * decision of its tools' sandbox: `deft serve: network: blocked HOST:PORT (REASON)` for every
 * refusal, `… allowed HOST:PORT` the first time a destination is allowed.
 */
import type { CallNetworkDecision } from "../tools/call_network.ts";
import { warnStderr } from "./io.ts";

/** The listener that writes `command`'s network lines. */
export function networkNote(command: string): (decision: CallNetworkDecision) => void {
  const shown = new Set<string>();
  return (d) => {
    const where = `${d.host}:${d.port}`;
    if (!d.allowed) warnStderr(`${command}: network: blocked ${where} (${d.reason})`);
    else if (!shown.has(where)) {
      shown.add(where);
      warnStderr(`${command}: network: allowed ${where}`);
    }
  };
}
