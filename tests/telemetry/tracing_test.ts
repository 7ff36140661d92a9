/**
 * Spans as `withSpan` makes them, seen through a recording tracer provider registered with the
 * OpenTelemetry API (what Deno's exporter is when `OTEL_DENO=true`); no process is started.
 *
 * Promises guarded here:
 * - a span whose work throws is ended, once, with the error status, and the throw passes on:
 *   "a span whose work throws is ended with the error status and the throw passes on"
 * - the status names the error's kind, never its text, unless the user opted in to content:
 *   the same test and "with the content opt-in, a failed span's status also holds the error text"
 * - text that is not a label (a name, an id, a kind) never becomes an attribute without the
 *   opt-in, whatever a caller passes: "free text and content attributes are dropped without the
 *   opt-in"
 * - a failed tool call's kind comes from a fixed vocabulary: "a tool's error kind is one of three"
 * - a session's id reaches every span of it, and a later turn links to the first; counts go to
 *   the exporter as integers (BigInt), the cost as a double: "a session's id goes on its turn,
 *   the spans inside it and the run around it; a later turn links to the first"
 */
import * as assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import * as otel from "@opentelemetry/api";
import { toolErrorKind } from "../../src/telemetry/tool.ts";
import { initTracing, setConversation, withSpan } from "../../src/telemetry/tracing.ts";

interface Recorded {
  name: string;
  attributes: Record<string, unknown>;
  status?: { code: number; message?: string };
  ended: number;
  links: otel.Link[];
  spanId: string;
}

const recorded: Recorded[] = [];

function recordingSpan(name: string, links: otel.Link[] = []): otel.Span {
  const context: otel.SpanContext = {
    traceId: crypto.randomUUID().replaceAll("-", ""),
    spanId: crypto.randomUUID().replaceAll("-", "").slice(0, 16),
    traceFlags: 1,
  };
  const rec: Recorded = { name, attributes: {}, ended: 0, links, spanId: context.spanId };
  recorded.push(rec);
  const span: otel.Span = {
    spanContext: () => context,
    setAttribute(key, value) {
      rec.attributes[key] = value;
      return span;
    },
    setAttributes(attributes) {
      Object.assign(rec.attributes, attributes);
      return span;
    },
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    setStatus(status) {
      rec.status = status;
      return span;
    },
    updateName: () => span,
    end() {
      rec.ended++;
    },
    isRecording: () => true,
    recordException() {},
  };
  return span;
}

const provider: otel.TracerProvider = {
  getTracer: () => ({
    startSpan: (name, options) => recordingSpan(name, options?.links),
    startActiveSpan: () => {
      throw new Error("not used by Deft");
    },
  }),
};

// What Deno installs with OTEL_DENO=true: the active context follows async calls.
const storage = new AsyncLocalStorage<otel.Context>();
otel.context.setGlobalContextManager({
  active: () => storage.getStore() ?? otel.ROOT_CONTEXT,
  with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.call(thisArg, ...args)),
  bind: (_ctx, target) => target,
  enable() {
    return this;
  },
  disable() {
    return this;
  },
});

const SWITCHES = ["OTEL_DENO", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"];

/**
 * Tracing switched on in this process, with `recorded` as the exporter, until the result is
 * disposed (the variables go back to what they were).
 */
async function tracingOn(content: boolean): Promise<Disposable> {
  const saved = SWITCHES.map((name) => [name, Deno.env.get(name)] as const);
  Deno.env.set("OTEL_DENO", "true");
  if (content) Deno.env.set("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true");
  else Deno.env.delete("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT");
  otel.trace.setGlobalTracerProvider(provider);
  await initTracing();
  recorded.length = 0;
  return {
    [Symbol.dispose]: () => {
      for (const [name, value] of saved) {
        if (value === undefined) Deno.env.delete(name);
        else Deno.env.set(name, value);
      }
    },
  };
}

class ProviderRefusal extends Error {}

Deno.test("a span whose work throws is ended with the error status and the throw passes on", async () => {
  using _tracing = await tracingOn(false);
  const thrown = new ProviderRefusal("the model said: SECRET-PROMPT-TEXT");
  await assert.rejects(
    withSpan("outer", {}, () => withSpan("inner", {}, () => Promise.reject(thrown))),
    (e) => e === thrown,
  );
  assert.deepEqual(recorded.map((r) => [r.name, r.ended]), [["outer", 1], ["inner", 1]]);
  for (const span of recorded) {
    assert.deepEqual(span.status, { code: otel.SpanStatusCode.ERROR, message: "ProviderRefusal" });
    assert.equal(span.attributes["error.type"], "ProviderRefusal");
  }
  assert.doesNotMatch(JSON.stringify(recorded), /SECRET-PROMPT-TEXT/);
});

Deno.test("with the content opt-in, a failed span's status also holds the error text", async () => {
  using _tracing = await tracingOn(true);
  await assert.rejects(withSpan("work", {}, () => Promise.reject(new TypeError("bad input"))));
  assert.deepEqual(recorded[0].status, {
    code: otel.SpanStatusCode.ERROR,
    message: "TypeError: bad input",
  });
  assert.equal(recorded[0].ended, 1);
});

Deno.test("free text and content attributes are dropped without the opt-in", async () => {
  using _tracing = await tracingOn(false);
  await withSpan("work", {
    "deft.task.id": "t00",
    "gen_ai.request.model": "meta-llama/Llama-3.1-8B-Instruct:free",
    "deft.note": "rm -rf ~/important files",
    "gen_ai.input.messages": "[]",
  }, (span) => {
    span.set({ "deft.list": ["ok", "two words"], "deft.steps": 3 });
    span.fail("not a kind, a sentence");
    return Promise.resolve();
  });
  assert.deepEqual(recorded[0].attributes, {
    "deft.task.id": "t00",
    "gen_ai.request.model": "meta-llama/Llama-3.1-8B-Instruct:free",
    "deft.steps": 3,
  });
  assert.deepEqual(recorded[0].status, { code: otel.SpanStatusCode.ERROR, message: "error" });
});

Deno.test("a tool's error kind is one of three", () => {
  const deny = { decision: "deny", decided_by: "rule", asked: false };
  assert.equal(toolErrorKind({ success: false, error_code: -1, approval: deny }), "refused");
  assert.equal(toolErrorKind({ success: false, error_code: 3 }), "exit_status");
  assert.equal(toolErrorKind({ success: false, error_code: -1 }), "tool_error");
  assert.equal(toolErrorKind({ success: false }), "tool_error");
});

Deno.test("a session's id goes on its turn, the spans inside it and the run around it; a later turn links to the first", async () => {
  using _tracing = await tracingOn(false);
  const session = `20261206_051500_${crypto.randomUUID().slice(0, 6)}`;
  const turn = () =>
    withSpan("invoke_agent deft", {}, async () => {
      await withSpan("chat m", { "gen_ai.usage.input_tokens": 12, "deft.cost_usd": 0 }, (span) => {
        span.set({ "deft.tool.error_code": -1 });
        return Promise.resolve();
      });
    }, { root: true, conversation: session });
  await withSpan("deft.run", {}, turn, { root: true });
  // A batch's task span learns its session from the run's summary.
  await withSpan("deft.batch", {}, () =>
    withSpan("deft.task t00", {}, () => {
      setConversation(session);
      return Promise.resolve();
    }));
  // Two more turns, each a trace of its own.
  await turn();
  await turn();
  const named = (name: string) => recorded.filter((r) => r.name === name);
  for (const name of ["deft.run", "invoke_agent deft", "chat m", "deft.task t00"]) {
    for (const span of named(name)) {
      assert.equal(span.attributes["gen_ai.conversation.id"], session, name);
    }
  }
  assert.equal(named("deft.batch")[0].attributes["gen_ai.conversation.id"], undefined);
  // The first turn (under the run) starts nothing new; the later ones link to it.
  const [first, ...later] = named("invoke_agent deft");
  assert.equal(later.length, 2);
  assert.deepEqual(first.links, []);
  for (const t of later) {
    assert.deepEqual(t.links.map((l) => l.context.spanId), [first.spanId]);
  }
  // Counts and codes reach the exporter as BigInt (OTLP intValue); the cost stays a number.
  const chat = named("chat m")[0].attributes;
  assert.equal(typeof chat["gen_ai.usage.input_tokens"], "bigint");
  assert.equal(chat["gen_ai.usage.input_tokens"], 12n);
  assert.equal(chat["deft.tool.error_code"], -1n);
  assert.equal(typeof chat["deft.cost_usd"], "number");
});
