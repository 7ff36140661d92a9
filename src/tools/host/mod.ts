/**
 * The tool host: where the tools that touch the system run, and how their calls get there. This
 * is the folder's one public module; the rest of Deft imports the host from here (README.md in
 * this folder is the map of its files).
 *
 * - `createHostedTools` builds the tools every command runs: the one factory, `createTools`
 *   (src/tools/registry.ts), given a host per place. `hostDirs` names the folders hosts may use.
 * - `checkSandbox` fails at start when a sandbox is asked for and bubblewrap cannot run.
 * - `parseDeadlines` / `deadlineSeconds`: how long one call may run before its host gives up.
 * - `workerEntry`, `setWorkerEntry`, `TOOL_HOST_COMMAND`: how Deft's code is entered as a host.
 * - `containerLinkStarter`: the host inside a container (its code loads on first use).
 *
 * main.ts, the program's entry and also the worker's, alone reaches three files directly, so a
 * worker loads none of the main thread's side: entry_points.ts, worker.ts (`serveToolHost`) and
 * relay.ts (`relayToolHost`).
 */
import type { Container } from "../../container/container.ts";
import type { LinkStarter } from "./link.ts";

export { createHostedTools, hostDirs } from "./hosted_tools.ts";
export { checkSandbox } from "./sandbox_check.ts";
/** The sandboxed host's launch parts, for the bench's floor (loaded only when asked for). */
export const sandboxedHostParts = () => import("./sandboxed.ts");
export { type HostDirs, ToolHost } from "./tool_host.ts";
export {
  CLOSE_DEADLINE_SECONDS,
  type Deadlines,
  deadlineSeconds,
  DEFAULT_DEADLINE_SECONDS,
  parseDeadlines,
} from "./deadlines.ts";
export { setWorkerEntry, TOOL_HOST_COMMAND, workerEntry } from "./entry_points.ts";
export type { LinkStarter } from "./link.ts";

/**
 * The link starter for tools run inside `container` (`createHostedTools`'s `only`): the same
 * relay and messages as the sandboxed host, over the runtime's `exec`. Its code loads here, on
 * first use, so sessions without a container never load it.
 */
export async function containerLinkStarter(container: Container): Promise<LinkStarter> {
  return (await import("./container.ts")).containerLinkStarter(container);
}
