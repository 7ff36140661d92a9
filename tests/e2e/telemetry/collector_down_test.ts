/**
 * Tracing on with no collector listening changes nothing a user sees: the same exit code, the
 * same answer, nothing about the exporter on stderr, and little extra time.
 */
import * as assert from "node:assert/strict";
import { runMocked } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A port on 127.0.0.1 nobody listens on (it was free a moment ago). */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function timedRun(env: Record<string, string>) {
  await using dir = await tempDir("deft-trace-down-");
  const home = `${dir.path}/home`;
  const workspace = `${dir.path}/work`;
  await Deno.mkdir(home);
  await Deno.mkdir(workspace);
  await Deno.writeTextFile(`${workspace}/notes.txt`, "hello\n");
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "cat notes.txt" }]]),
    chatText("The notes say hello."),
  ]);
  try {
    const started = performance.now();
    const run = await runMocked(mock, "What do the notes say?", workspace, {
      env: { HOME: home, ...env },
    });
    return { ...run, seconds: (performance.now() - started) / 1000, requests: mock.requests };
  } finally {
    await mock.close();
  }
}

Deno.test({
  name: "a collector that is down changes no exit code or output and adds little time",
  sanitizeResources: false,
  fn: async () => {
    const off = await timedRun({});
    const down = await timedRun({
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort()}`,
    });
    assert.equal(off.code, 0, off.stderr);
    assert.equal(down.code, off.code, down.stderr);
    assert.equal(down.stdout, off.stdout);
    assert.equal(down.requests.length, off.requests.length);
    assert.doesNotMatch(
      down.stderr,
      /opentelemetry|otlp|exporter|ECONNREFUSED|connection refused/i,
    );
    // The same lines on stderr, session ids and times aside.
    const shape = (s: string) => s.replace(/[0-9a-f]{8,}|\d+(\.\d+)?/g, "#").split("\n").length;
    assert.equal(shape(down.stderr), shape(off.stderr), `${off.stderr}\n---\n${down.stderr}`);
    assert.ok(
      down.seconds < off.seconds + 3,
      `a down collector cost ${(down.seconds - off.seconds).toFixed(1)} s`,
    );
    console.log(`off ${off.seconds.toFixed(2)} s, collector down ${down.seconds.toFixed(2)} s`);
  },
});
