import assert from "node:assert/strict";
import { DenoStdioServerTransport } from "../../src/mcp/stdio_server_transport.ts";

/** Input the test writes line by line, and output it records (or refuses, like a closed pipe). */
function streams(options: { broken?: boolean } = {}) {
  let feed!: ReadableStreamDefaultController<Uint8Array>;
  const input = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
  const written: string[] = [];
  return {
    input,
    output: {
      write(bytes: Uint8Array): Promise<number> {
        if (options.broken) return Promise.reject(new Deno.errors.BrokenPipe("Broken pipe"));
        written.push(new TextDecoder().decode(bytes));
        return Promise.resolve(bytes.length);
      },
    },
    line: (message: unknown) =>
      feed.enqueue(new TextEncoder().encode(
        (typeof message === "string" ? message : JSON.stringify(message)) + "\n",
      )),
    end: () => feed.close(),
    written,
  };
}

const request = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });
const response = (id: number) => ({ jsonrpc: "2.0" as const, id, result: {} });
const tick = () => new Promise((r) => setTimeout(r, 10));

/** Whether `promise` settles within `ms`: a regression that waits forever fails instead of hanging. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => timer = setTimeout(() => r(false), ms));
  try {
    return await Promise.race([promise.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("the end of input waits for the answers to requests already received", async () => {
  const io = streams();
  const transport = new DenoStdioServerTransport(io);
  const received: unknown[] = [];
  transport.onmessage = (m) => received.push(m);
  await transport.start();
  io.line(request(1));
  io.line({ jsonrpc: "2.0", method: "notifications/initialized" });
  io.line(request(2));
  io.end();
  await transport.ended;
  assert.equal(received.length, 3);

  let answered = false;
  const done = transport.answered().then(() => answered = true);
  await transport.send(response(1));
  await tick();
  assert.equal(answered, false, "request 2 is still unanswered");
  await transport.send(response(2));
  await done;
  assert.deepEqual(io.written.map((w) => JSON.parse(w).id), [1, 2]);
});

Deno.test("a cancelled request is not waited for; an uncancelled one is", async () => {
  const io = streams();
  const transport = new DenoStdioServerTransport(io);
  await transport.start();
  io.line(request(7));
  io.line(request(8));
  io.line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } });
  io.end();
  assert.ok(await settlesWithin(transport.ended, 5_000), "the end of input was never noticed");
  // Request 8 was not cancelled, so the transport must still wait for its answer...
  const answered = transport.answered();
  assert.equal(await settlesWithin(answered, 200), false, "request 8 was not waited for");
  // ...and once 8 is answered, nothing is left: the cancelled 7 is not waited for.
  await transport.send(response(8));
  assert.ok(await settlesWithin(answered, 5_000), "the cancelled request 7 is still waited for");
});

Deno.test("a line that is not JSON-RPC is answered with its JSON-RPC error and skipped", async () => {
  const io = streams();
  const transport = new DenoStdioServerTransport(io);
  const errors: string[] = [];
  const received: unknown[] = [];
  transport.onerror = (e) => errors.push(e.message);
  transport.onmessage = (m) => received.push(m);
  await transport.start();
  io.line("hello");
  io.line({ jsonrpc: "2.0", id: 1 }); // neither request nor response
  io.line(request(3));
  io.end();
  await transport.ended;
  await tick();
  assert.equal(errors.length, 2);
  assert.deepEqual(
    io.written.map((w) => JSON.parse(w)).map((r) => [r.id, r.error.code]),
    [[null, -32700], [1, -32600]],
  );
  assert.equal(received.length, 1);
});

Deno.test("a write to a client that is gone closes the transport once", async () => {
  const io = streams({ broken: true });
  const transport = new DenoStdioServerTransport(io);
  let closes = 0;
  const errors: unknown[] = [];
  transport.onclose = () => closes++;
  transport.onerror = (e) => errors.push(e);
  await transport.start();
  await assert.rejects(transport.send(response(1)), Deno.errors.BrokenPipe);
  await assert.rejects(transport.send(response(2)), /the MCP connection is closed/);
  await transport.close();
  assert.equal(closes, 1);
  assert.ok(errors[0] instanceof Deno.errors.BrokenPipe);
});
