/** `deft serve` reads lines in linear time and answers an over-long line with an error line. */
import assert from "node:assert/strict";
import { ServerProcess } from "../../helpers/server_process.ts";

function bigCall(id: number, bytes: number): string {
  return JSON.stringify({ id, name: "no_such_tool", arguments: { pad: "x".repeat(bytes) } });
}

Deno.test("a 50 MB line is answered in about the time parsing it takes", async () => {
  const line = bigCall(1, 50_000_000);
  // The in-process floor: decoding and parsing the same bytes once.
  const bytes = new TextEncoder().encode(line + "\n");
  const parseStarted = performance.now();
  JSON.parse(new TextDecoder().decode(bytes));
  const parseMs = performance.now() - parseStarted;

  const server = new ServerProcess(["serve"]);
  try {
    await server.sendJson({ id: 0, name: "task_done" });
    await server.next();
    const started = performance.now();
    await server.send(bytes);
    const reply = await server.next(120_000);
    const serveMs = performance.now() - started;
    assert.equal(reply.id, 1);
    assert.match(String(reply.error), /Tool 'no_such_tool' not found/);
    const ratio = serveMs / parseMs;
    console.log(
      `50 MB line: answered in ${ratio.toFixed(1)}x the in-process parse ` +
        `(${serveMs.toFixed(0)} ms / ${parseMs.toFixed(0)} ms)`,
    );
    // Piping 50 MB and parsing it costs a few parses; the quadratic reader took ~500x.
    assert.ok(ratio < 60, `the 50 MB line took ${ratio.toFixed(1)}x the parse time`);
    const nextStarted = performance.now();
    await server.sendJson({ id: 2, name: "task_done" });
    assert.equal((await server.next()).id, 2);
    assert.ok(performance.now() - nextStarted < 10_000);
    assert.equal(await server.end(), 0);
  } finally {
    if (server.child) await server.end().catch(() => {});
  }
});

Deno.test("a line over --max-line-bytes gets an error line; the next call is answered", async () => {
  const server = new ServerProcess(["serve", "--max-line-bytes", "100000"]);
  await server.send(bigCall(1, 300_000));
  const refused = await server.next();
  assert.equal(refused.success, false);
  assert.match(String(refused.error), /line 1 is 300\d+ bytes, over the limit of 100000/);
  await server.sendJson({ id: 2, name: "task_done" });
  assert.equal((await server.next()).id, 2);
  assert.equal(await server.end(), 0);
});

Deno.test("a bad --max-line-bytes is a usage error", async () => {
  const server = new ServerProcess(["serve", "--max-line-bytes", "ten"]);
  assert.equal(await server.end(), 2);
  assert.match(server.stderr, /--max-line-bytes must be a whole number/);
});
