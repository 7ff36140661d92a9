/**
 * `deft __tool-host`: the process side of the sandboxed tool host (sandboxed.ts), run inside
 * bubblewrap. It reads the worker's permissions from its first line, starts the same worker the
 * in-process host uses with them, and passes messages both ways, one JSON object a line. Reports
 * of process groups stay here: their pids mean nothing outside this PID namespace, and the whole
 * namespace ends with this process. It exits when Deft closes its input.
 *
 * This is a process entry, not a tool, so it owns its standard streams: the messages go over
 * stdin and stdout, and a fatal problem is told on stderr.
 */
import { readLines } from "../../line_reader.ts";
import { workerEntry } from "./entry.ts";
import type { HostReply } from "./protocol.ts";
import type { BootMessage } from "./sandboxed.ts";

/** Serves until standard input ends; returns the exit code. */
export async function relayToolHost(): Promise<number> {
  const encoder = new TextEncoder();
  const write = (message: HostReply) =>
    writeAll(Deno.stdout, encoder.encode(`${JSON.stringify(message)}\n`));
  let worker: Worker | undefined;
  for await (const event of readLines(Deno.stdin.readable)) {
    if (!("line" in event)) return fatal(`a request of ${event.tooLong} bytes is over the limit`);
    let message: unknown;
    try {
      message = JSON.parse(event.line);
    } catch {
      return fatal("a request was not JSON");
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
      return fatal("the first request must be the boot message");
    }
    worker = new Worker(workerEntry(), {
      type: "module",
      deno: { permissions: boot.permissions },
    } as WorkerOptions);
    worker.onmessage = (e: MessageEvent<HostReply>) => {
      if (e.data.type !== "child") write(e.data);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      Deno.exit(fatal(`the tool worker failed: ${e.message}`));
    };
  }
  worker?.terminate();
  return 0;
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
