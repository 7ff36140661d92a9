/**
 * OpenTelemetry traces, received the way a collector would: a tiny OTLP/HTTP JSON receiver on
 * 127.0.0.1 gets what Deno's exporter sends while `deft batch` runs two tasks against the mock
 * model, and the test checks the span tree, the attributes and the parentage from an inbound
 * `TRACEPARENT`; and that prompt and answer text stay off the spans unless the user opts in.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { makeBatchFixture } from "../../helpers/batch_fixture.ts";
import { interactiveOnStdin, runDeft, runMocked } from "../../helpers/deft.ts";
import {
  chatText,
  chatToolCalls,
  MockLLM,
  type MockReply,
  type MockRequest,
} from "../../helpers/mock_llm.ts";
import { otlpReceiver, plainValue } from "../../helpers/otlp.ts";
import { tempDir } from "../../helpers/temp.ts";

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  status?: { code?: number };
}

/** The shared receiver (tests/helpers/otlp.ts), its spans' attributes as plain values by key. */
function receiver() {
  const r = otlpReceiver();
  return {
    get spans(): ReceivedSpan[] {
      return r.spans().map((s) => ({
        ...s,
        attributes: Object.fromEntries(
          (s.attributes ?? []).map((a) => [a.key, plainValue(a.value)]),
        ),
      }));
    },
    url: r.url,
    close: r.close,
  };
}

/** The model: fixes the bug and prints the shell's TRACEPARENT, then calls task_done. */
function model(req: MockRequest): MockReply {
  const messages = req.body?.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role === "tool") return chatToolCalls([["task_done", {}]]);
  return chatToolCalls([["bash", {
    command: `sed -i 's/a - b/a + b/' calc.py && echo "TP=$TRACEPARENT"`,
  }]]);
}

const INBOUND_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const INBOUND_SPAN = "00f067aa0ba902b7";

Deno.test({
  name: "deft batch of two tasks exports one trace under the inbound TRACEPARENT",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-otel-");
    const collector = receiver();
    const mock = MockLLM.start([], model);
    try {
      const { tasksFile } = await makeBatchFixture(dir.path, 2, () => "fix", () => ({
        replay: undefined as unknown as string,
      }));
      const out = join(dir.path, "out");
      const home = join(dir.path, "home");
      await Deno.mkdir(home);
      const run = await runDeft([
        "batch",
        tasksFile,
        "--out",
        out,
        "--concurrency",
        "2",
        "-p",
        "openai_compatible",
        "-m",
        "mock-model",
        "--model-base-url",
        `${mock.url}/v1`,
      ], {
        env: {
          HOME: home,
          OPENAI_COMPATIBLE_API_KEY: "k",
          OTEL_DENO: "true",
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          TRACEPARENT: `00-${INBOUND_TRACE}-${INBOUND_SPAN}-01`,
        },
      });
      assert.equal(run.code, 0, run.stderr);
      const spans = collector.spans;
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const named = (prefix: string) => spans.filter((s) => s.name.startsWith(prefix));
      const parentOf = (s: ReceivedSpan) => byId.get(s.parentSpanId ?? "");
      const summary = spans.map((s) => `${s.name} ${s.spanId}<-${s.parentSpanId}`).join("\n");

      // One trace, continuing the caller's.
      for (
        const s of named("deft.").concat(
          named("invoke_agent"),
          named("chat "),
          named("execute_tool"),
        )
      ) {
        assert.equal(s.traceId, INBOUND_TRACE, `${s.name} is in another trace\n${summary}`);
      }
      const [batch] = named("deft.batch");
      assert.ok(batch, `no batch span\n${summary}`);
      assert.equal(batch.parentSpanId, INBOUND_SPAN);

      const tasks = named("deft.task");
      assert.deepEqual(tasks.map((t) => t.attributes["deft.task.id"]).sort(), ["t00", "t01"]);
      for (const t of tasks) assert.equal(t.parentSpanId, batch.spanId, summary);

      const runs = named("deft.run");
      assert.equal(runs.length, 2, summary);
      for (const r of runs) {
        assert.ok(tasks.includes(parentOf(r)!), `run ${r.spanId} is not under a task\n${summary}`);
        assert.equal(r.attributes["deft.exit_code"], 0);
        // The task span names the session its run recorded, as the run's spans do.
        const session = r.attributes["gen_ai.conversation.id"];
        assert.match(String(session), /^\d{8}_\d{6}_[0-9a-f]{6}$/, summary);
        assert.equal(parentOf(r)!.attributes["gen_ai.conversation.id"], session, summary);
      }
      assert.notEqual(
        runs[0].attributes["gen_ai.conversation.id"],
        runs[1].attributes["gen_ai.conversation.id"],
      );
      assert.equal(batch.attributes["gen_ai.conversation.id"], undefined, summary);
      const turns = named("invoke_agent");
      assert.equal(turns.length, 2, summary);
      for (const t of turns) {
        assert.ok(runs.includes(parentOf(t)!), `turn ${t.spanId} is not under a run\n${summary}`);
        assert.equal(t.attributes["deft.turn.steps"], 2);
      }

      const chats = named("chat ");
      assert.equal(chats.length, 4, summary);
      for (const c of chats) {
        assert.ok(turns.includes(parentOf(c)!), `chat ${c.spanId} is not under a turn\n${summary}`);
        assert.equal(c.attributes["gen_ai.system"], "openai_compatible");
        assert.equal(c.attributes["gen_ai.provider.name"], "openai_compatible");
        assert.equal(c.attributes["gen_ai.request.model"], "mock-model");
        assert.equal(c.attributes["gen_ai.usage.input_tokens"], 100);
        assert.equal(c.attributes["gen_ai.usage.output_tokens"], 20);
        assert.deepEqual(c.attributes["gen_ai.response.finish_reasons"], ["tool_calls"]);
        // No prompt or answer text unless the user opts in.
        assert.equal(c.attributes["gen_ai.input.messages"], undefined);
        assert.equal(c.attributes["gen_ai.output.messages"], undefined);
      }

      const tools = named("execute_tool");
      assert.deepEqual(tools.map((t) => t.attributes["gen_ai.tool.name"]).sort(), [
        "bash",
        "bash",
        "task_done",
        "task_done",
      ]);
      for (const t of tools) {
        assert.ok(turns.includes(parentOf(t)!), `tool ${t.spanId} is not under a turn\n${summary}`);
        assert.equal(t.attributes["deft.tool.success"], true);
        assert.equal(t.attributes["deft.approval.decision"], "allow");
      }
      const bashes = tools.filter((t) => t.attributes["gen_ai.tool.name"] === "bash");
      for (const b of bashes) assert.equal(b.attributes["deft.tool.effect"], "command");

      // The shell's command saw its own tool span as TRACEPARENT.
      const seen = mock.requests.flatMap((r) =>
        (r.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool")
          .map((m: { content: string }) => m.content.match(/TP=(\S*)/)?.[1])
      ).filter((tp) => tp !== undefined);
      assert.deepEqual(
        [...new Set(seen)].sort(),
        bashes.map((b) => `00-${INBOUND_TRACE}-${b.spanId}-01`).sort(),
      );

      // The model requests carried a traceparent inside the model call's span.
      for (const r of mock.requests) {
        const header = r.headers.get("traceparent");
        assert.ok(header, "a model request without traceparent");
        const [, trace, span] = header.split("-");
        assert.equal(trace, INBOUND_TRACE);
        let at = byId.get(span);
        while (at && !at.name.startsWith("chat ")) at = parentOf(at);
        assert.ok(at, `traceparent ${header} names no span under a model call\n${summary}`);
      }
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});

Deno.test({
  name: "prompt and answer text go on model spans only when the user opts in",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-trace-content-");
    const home = join(dir.path, "home");
    await Deno.mkdir(home);
    const spansOf = async (extra: Record<string, string>) => {
      const collector = receiver();
      const mock = MockLLM.start([chatText("The secret word is PAPAYA.")]);
      try {
        const run = await runMocked(mock, "Say the word BANANA-PROMPT back.", dir.path, {
          env: {
            HOME: home,
            OTEL_DENO: "true",
            OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
            OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
            ...extra,
          },
        });
        assert.equal(run.code, 0, run.stderr);
        return collector.spans;
      } finally {
        await mock.close();
        await collector.close();
      }
    };
    const plainRun = await spansOf({});
    const everything = JSON.stringify(plainRun);
    assert.ok(plainRun.some((s) => s.name === "chat mock-model"), everything);
    assert.doesNotMatch(everything, /BANANA-PROMPT|PAPAYA/);

    const optedIn = await spansOf({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" });
    const chat = optedIn.find((s) => s.name === "chat mock-model");
    assert.match(String(chat?.attributes["gen_ai.input.messages"]), /BANANA-PROMPT/);
    assert.match(String(chat?.attributes["gen_ai.output.messages"]), /PAPAYA/);
    // A run outside any batch or inbound trace is a trace of its own, rooted at the run.
    const run = optedIn.find((s) => s.name === "deft.run");
    assert.ok(run && !run.parentSpanId, JSON.stringify(run));
  },
});

Deno.test({
  name: "each interactive turn is a span with its model calls under it",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-trace-turns-");
    const home = join(dir.path, "home");
    await Deno.mkdir(home);
    const collector = receiver();
    const mock = MockLLM.start([chatText("First answer."), chatText("Second answer.")]);
    try {
      const run = await interactiveOnStdin(dir.path, mock, "first question\nsecond question\n", {
        args: ["--approval", "never"],
        cwd: dir.path,
        env: {
          HOME: home,
          XDG_STATE_HOME: join(home, "state"),
          OTEL_DENO: "true",
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          TRACEPARENT: `00-${INBOUND_TRACE}-${INBOUND_SPAN}-01`,
        },
      });
      assert.equal(run.code, 0, run.stderr);
      const spans = collector.spans;
      const summary = spans.map((s) => `${s.name} ${s.spanId}<-${s.parentSpanId}`).join("\n");
      const turns = spans.filter((s) => s.name === "invoke_agent deft");
      assert.equal(turns.length, 2, summary);
      for (const turn of turns) {
        assert.equal(turn.traceId, INBOUND_TRACE, summary);
        assert.equal(turn.parentSpanId, INBOUND_SPAN, summary);
        const chats = spans.filter((s) => s.name === "chat mock" && s.parentSpanId === turn.spanId);
        assert.equal(chats.length, 1, summary);
      }
      assert.ok(!spans.some((s) => s.name === "deft.run"), summary);
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});
