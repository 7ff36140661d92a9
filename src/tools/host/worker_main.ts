/**
 * The tool host's entry when Deft runs from source without main.ts (tests); main.ts is the usual
 * one. As a worker it serves tool calls; as a process started with `__tool-host` it is the
 * sandboxed host's relay.
 */
import { inWorker } from "../worker_scope.ts";
import { TOOL_HOST_COMMAND } from "./entry_points.ts";
import { serveToolHost } from "./worker.ts";

if (inWorker()) {
  serveToolHost();
} else if (import.meta.main && Deno.args[0] === TOOL_HOST_COMMAND) {
  const { relayToolHost } = await import("./relay.ts");
  Deno.exit(await relayToolHost());
}
