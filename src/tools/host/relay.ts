/**
 * `deft __tool-host`: the process side of the sandboxed tool host (sandboxed.ts), run inside
 * bubblewrap or a container. It reads the worker's permissions from its first line, starts the
 * same worker the in-process host uses with them, and passes messages both ways, one JSON object a
 * line. Reports of process groups stay here: their pids mean nothing outside this PID namespace.
 * It exits when Deft closes its input (a call past its deadline, the session's end), and kills
 * those groups first: bubblewrap's namespace would end with it, but in a container (`exec`) the
 * processes the tools started would live on until the container ends.
 *
 * This is a process entry, not a tool, so it owns its standard streams: the messages go over
 * stdin and stdout, and a fatal problem is told on stderr.
 */
import { readLines } from "../../line_reader.ts";
import { startWorker } from "../../policy/workers.ts";
import { workerEntry } from "./entry_points.ts";
import type { HostReply, HostRequest } from "./protocol.ts";
import type { BootMessage } from "./sandboxed.ts";

/** Serves until standard input ends; returns the exit code. */
export async function relayToolHost(): Promise<number> {
  const encoder = new TextEncoder();
  const write = (message: HostReply) =>
    writeAll(Deno.stdout, encoder.encode(`${JSON.stringify(message)}\n`));
  let worker: Worker | undefined;
  // The host served in this process (see `servesHere`) instead of a worker.
  let here: ((message: HostRequest) => void) | undefined;
  const groups = new Set<number>();
  const end = (code: number) => {
    worker?.terminate();
    for (const group of groups) {
      try {
        Deno.kill(-group, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    return code;
  };
  for await (const event of readLines(Deno.stdin.readable)) {
    if (!("line" in event)) {
      return end(fatal(`a request of ${event.tooLong} bytes is over the limit`));
    }
    let message: unknown;
    try {
      message = JSON.parse(event.line);
    } catch {
      return end(fatal("a request was not JSON"));
    }
    if (here) {
      here(message as HostRequest);
      continue;
    }
    if (worker) {
      try {
        worker.postMessage(message);
      } catch (e) {
        // A value the worker cannot take answers its own request; the host keeps serving.
        const id = (message as { id?: unknown }).id;
        const error = `the call could not be handed to the tool worker: ${(e as Error).message}`;
        if (typeof id === "number") write({ type: "closed", id, errors: [error] });
      }
      continue;
    }
    const boot = message as Partial<BootMessage>;
    if (boot.type !== "boot" || typeof boot.permissions !== "object") {
      return end(fatal("the first request must be the boot message"));
    }
    if (boot.fencedProcess && servesHere(boot.permissions)) {
      const { toolHostHandler } = await import("./worker.ts");
      // Tools here report no process groups (they are not in a worker): bubblewrap's PID
      // namespace ends every process they started when this one ends.
      here = toolHostHandler((reply) => {
        if (reply.type !== "child") write(reply);
      });
      continue;
    }
    worker = startWorker(workerEntry(), boot.permissions);
    worker.onmessage = (e: MessageEvent<HostReply>) => {
      if (e.data.type !== "child") return write(e.data);
      if (e.data.running) groups.add(e.data.pid);
      else groups.delete(e.data.pid);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      Deno.exit(end(fatal(`the tool worker failed: ${e.message}`)));
    };
  }
  return end(0);
}

/**
 * True when this process may serve the calls itself, without a worker: Deft started it with the
 * worker's own permissions as its Deno flags (`fencedProcess`, sandboxed.ts) and none of the
 * permissions the worker would lack is held whole here. A process that holds more (a compiled
 * Deft keeps the permissions it was built with) runs the worker, as before.
 */
function servesHere(permissions: Deno.PermissionOptionsObject): boolean {
  const kinds = ["read", "write", "run", "env", "net", "sys", "ffi", "import"] as const;
  return kinds.every((name) =>
    permissions[name] === true || Deno.permissions.querySync({ name }).state !== "granted"
  );
}

function fatal(message: string): number {
  writeAll(Deno.stderr, new TextEncoder().encode(`deft __tool-host: ${message}\n`));
  return 70;
}

/** Writes every byte before returning, so replies never interleave. */
function writeAll(stream: { writeSync(p: Uint8Array): number }, bytes: Uint8Array) {
  let done = 0;
  while (done < bytes.length) done += stream.writeSync(bytes.subarray(done));
}
