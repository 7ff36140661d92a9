/**
 * The worker side of the tool host: runs the calls the main thread sends on the tools it was
 * given at init, each loaded on its first call (in_process.ts). Deno's worker permissions (see
 * src/policy/permissions.ts) fence it in; a denial comes back as a tool error that says what is
 * allowed. The main thread has validated every call's arguments before sending it.
 */
import { explainDenial, type ToolDirs } from "../../policy/permissions.ts";
import { thrownResult, type ToolContext, type ToolExecResult } from "../base.ts";
import { InProcessHost } from "../in_process.ts";
import type { HostReply, HostRequest, Probe } from "./protocol.ts";

interface WorkerScope {
  onmessage: ((e: MessageEvent<HostRequest>) => void) | null;
  postMessage(message: HostReply): void;
}

/** Serves tool calls inside this worker until it is terminated. */
export function serveToolHost(): void {
  const scope = globalThis as unknown as WorkerScope;
  const handle = toolHostHandler((reply) => scope.postMessage(reply));
  scope.onmessage = (event) => handle(event.data);
}

/**
 * The tool host's message handler, wherever it runs: in a worker (`serveToolHost`), or in the
 * sandboxed host's own process when that process's Deno permissions are already the worker's
 * (relay.ts). Posts `ready` at once; then answers each request through `post`.
 */
export function toolHostHandler(
  post: (reply: HostReply) => void,
): (message: HostRequest) => void {
  let context: ToolContext | undefined;
  let dirs: ToolDirs | undefined;
  let tools: InProcessHost | undefined;
  // Calls run concurrently (tools serialise what must be serialised); init and close run one at a
  // time in arrival order, so closing everything waits for a single close still under way.
  let lifecycle = Promise.resolve();
  const receive = (message: HostRequest) => {
    if (message.type === "call" || message.type === "probe") void handle(message);
    else lifecycle = lifecycle.then(() => handle(message));
  };
  // Messages sent before this handler existed would have been dropped, so the main thread waits
  // for this before it sends anything.
  queueMicrotask(() => post({ type: "ready", id: -1 }));
  const handle = async (message: HostRequest): Promise<void> => {
    switch (message.type) {
      case "init":
        context = message.context;
        dirs = message.dirs;
        tools = new InProcessHost(context, message.names);
        break;
      case "call": {
        let result: ToolExecResult;
        try {
          if (!tools) throw new Error("the tool host was not initialised");
          result = await tools.call(message.name, message.args, message.plan);
        } catch (e) {
          result = thrownResult(message.name, e);
        }
        if (result.error_code !== 0 && result.error && context) {
          const explained = explainDenial(result.error, context.workspace, dirs);
          if (explained) result = { ...result, error: explained };
        }
        post({ type: "result", id: message.id, result });
        break;
      }
      case "probe": {
        let outcome = "allowed";
        try {
          await attempt(message.probe);
        } catch (e) {
          const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
          outcome = explainDenial(text, context?.workspace ?? "", dirs) ?? text;
        }
        post({ type: "probed", id: message.id, outcome });
        break;
      }
      case "close": {
        // A tool closed on its own (Ctrl-C on a running command) comes back fresh on its next call.
        let errors: string[] = [];
        if (message.name === null) errors = await tools?.closeAll() ?? [];
        else {
          await tools?.close(message.name).catch((e) => {
            errors = [`closing tool '${message.name}' failed: ${String(e)}`];
          });
        }
        post({ type: "closed", id: message.id, errors });
        break;
      }
    }
  };
  return receive;
}

async function attempt(probe: Probe): Promise<void> {
  switch (probe.action) {
    case "read":
      await Deno.readFile(probe.target);
      return;
    case "write":
      await Deno.writeTextFile(probe.target, "probe\n");
      return;
    case "fetch":
      await (await fetch(probe.target)).body?.cancel();
      return;
    case "run": {
      // Loaded here: probes check the fence in tests, and the worker's start stays light.
      const { helperLaunch, runChild } = await import("../../policy/process.ts");
      await runChild(helperLaunch(probe.target, ["--version"]), { stdout: "null", stderr: "null" });
      return;
    }
  }
}
