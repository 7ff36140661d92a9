/**
 * The ACP connection's stream: a line over the size limit is answered (a request gets an error,
 * an answer to one of Deft's requests becomes an error for that request) and the stream goes on.
 */
import assert from "node:assert/strict";
import { acpStream } from "../../src/acp/stream.ts";

Deno.test("acp stream: an over-size request gets an error with its id, and the stream goes on", async () => {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const fromAgent = new TransformStream<Uint8Array, Uint8Array>();
  const stream = acpStream(fromAgent.writable, toAgent.readable, 1024);
  const reader = stream.readable.getReader();
  const writer = toAgent.writable.getWriter();
  // What the agent writes back, read as it comes (a pipe has little room).
  const back = new Response(fromAgent.readable).text();
  const line = (o: unknown) => new TextEncoder().encode(JSON.stringify(o) + "\n");
  const text = "z".repeat(3000);
  // Split across writes, the id at the front once and at the end once.
  const request = line({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { text } });
  await writer.write(request.subarray(0, 700));
  await writer.write(request.subarray(700));
  const late = JSON.stringify({ jsonrpc: "2.0", method: "session/prompt", params: { text } });
  await writer.write(new TextEncoder().encode(late.slice(0, -1) + ',"id":"late"}\n'));
  await writer.write(line({ jsonrpc: "2.0", id: 4, method: "session/list", params: {} }));
  await writer.close();
  const passed = await reader.read();
  assert.deepEqual(passed.value, { jsonrpc: "2.0", id: 4, method: "session/list", params: {} });
  assert.equal((await reader.read()).done, true);
  await fromAgent.writable.close();
  const written = (await back).trim().split("\n")
    .map((l) => JSON.parse(l));
  assert.deepEqual(written.map((m) => [m.id, m.error.code]), [[3, -32600], ["late", -32600]]);
  assert.match(written[0].error.message, /The message is 3\.0 KB, larger than the 1\.0 KB/);
});

Deno.test("acp stream: an over-size answer from the client fails only the request it answers", async () => {
  // The agent's side of the stream, in this process: the client answers its request with a line
  // over the limit (a tiny one here), then goes on.
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const fromAgent = new TransformStream<Uint8Array, Uint8Array>();
  const stream = acpStream(fromAgent.writable, toAgent.readable, 1024);
  const reader = stream.readable.getReader();
  const writer = toAgent.writable.getWriter();
  // What the agent writes back, read as it comes (a pipe has little room).
  const back = new Response(fromAgent.readable).text();
  const line = (o: unknown) => new TextEncoder().encode(JSON.stringify(o) + "\n");
  await writer.write(line({ jsonrpc: "2.0", id: 7, result: { content: "y".repeat(5000) } }));
  await writer.write(
    line({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } }),
  );
  const first = (await reader.read()).value as { id: number; error: { message: string } };
  assert.equal(first.id, 7, JSON.stringify(first));
  assert.match(first.error.message, /An answer from the client is 4\.9 KB/);
  const second = (await reader.read()).value as { method: string };
  assert.equal(second.method, "session/cancel");
  await writer.close();
  assert.equal((await reader.read()).done, true);
  // Nothing was written back to the client for it.
  await stream.writable.close();
  await fromAgent.writable.close().catch(() => {});
  const echoed = await back;
  assert.equal(echoed, "");
});
