/**
 * A session's spans as a collector receives them: raw OTLP/HTTP JSON, posted by Deno's exporter
 * to a receiver on 127.0.0.1, read without any OpenTelemetry library in between.
 *
 * Promises guarded here:
 * - every span of an interactive session (its turns, model calls, tool calls) carries
 *   `gen_ai.conversation.id`, the trajectory's `session_id`; each turn is a trace of its own whose
 *   root links to the session's first turn: "an interactive session over a pty: one conversation
 *   id on every span, one trace per turn, linked to the first"; in ACP the id is the client's
 *   `sessionId`: "an ACP session of two prompts: the client's sessionId on every span, a trace
 *   per prompt"
 * - token counts, step numbers, exit codes and error codes arrive as OTLP `intValue`, not
 *   `doubleValue`: the same test and "deft run: the run span carries the session's conversation
 *   id and an integer exit code"
 * - `deft serve` with tracing on exports one span per call, with the tool's name and the call's id
 *   and none of the call's arguments or output: "deft serve exports a span per tool call, without
 *   content"; so does `deft mcp`: "deft mcp exports a span per tool call, named by the request's
 *   id, without content"
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { withAcp } from "../../helpers/acp_client.ts";
import { runDeft, runMocked } from "../../helpers/deft.ts";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { otlpReceiver } from "../../helpers/otlp.ts";
import { tempDir } from "../../helpers/temp.ts";

/** An OTLP attribute value as sent: exactly one of these keys. */
type RawValue = Record<string, unknown>;

interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, RawValue>;
  links: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}

/** The shared receiver (tests/helpers/otlp.ts): the bodies, and the spans, attributes by key. */
function receiver() {
  const r = otlpReceiver();
  return {
    get bodies(): string[] {
      return r.posts.map((p) => p.text);
    },
    spans: (): RawSpan[] =>
      r.spans().map((s) => ({
        ...s,
        links: s.links ?? [],
        attributes: Object.fromEntries(
          (s.attributes ?? []).map((a) => [a.key, a.value as RawValue]),
        ),
      })),
    env: r.env,
    close: r.close,
  };
}

/** The OTLP integer `n` as the JSON encoding sends it (a string, for 64 bits). */
function intValue(n: number): RawValue {
  return { intValue: String(n) };
}

function summary(spans: RawSpan[]): string {
  return spans.map((s) =>
    `${s.name} ${s.traceId}/${s.spanId}<-${s.parentSpanId || "-"} ${JSON.stringify(s.attributes)}`
  ).join("\n");
}

/** Deft's own spans (not Deno's fetch spans). */
function deftSpans(spans: RawSpan[]): RawSpan[] {
  return spans.filter((s) => /^(deft\.|invoke_agent |chat |execute_tool )/.test(s.name));
}

async function sessionIdIn(dir: string): Promise<string> {
  for await (const entry of Deno.readDir(dir)) {
    const m = entry.name.match(/^trajectory_(.+)\.json$/);
    if (m) return JSON.parse(await Deno.readTextFile(join(dir, entry.name))).session_id ?? m[1];
  }
  throw new Error(`no trajectory in ${dir}`);
}

const ENTER = "\r";
const CTRL_D = "\x04";

Deno.test({
  name:
    "an interactive session over a pty: one conversation id on every span, one trace per turn, linked to the first",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-trace-session-");
    const home = join(dir.path, "home");
    const work = join(dir.path, "work");
    await Deno.mkdir(home);
    await Deno.mkdir(work);
    const collector = receiver();
    const mock = MockLLM.start([
      chatToolCalls([["bash", { command: "exit 3" }]]),
      chatText("First answer."),
      chatText("Second answer."),
    ]);
    try {
      const run = await interactiveInPty(work, mock, [
        { expect: "deft> ", send: "first question" + ENTER },
        { expect: "First answer\\.[\\s\\S]*deft> ", send: "second question" + ENTER },
        { expect: "Second answer\\.[\\s\\S]*deft> ", send: CTRL_D },
        { expect: "bye" },
      ], {
        args: ["--approval", "never"],
        cwd: home,
        env: { HOME: home, XDG_STATE_HOME: join(home, "state"), ...collector.env },
      });
      const out = plain(run.output);
      assert.equal(run.failed, null, out);
      assert.equal(run.code, 0, out);
      const session = await sessionIdIn(join(home, "state", "deft", "trajectories"));

      const spans = deftSpans(collector.spans());
      const all = summary(spans);
      const turns = spans.filter((s) => s.name === "invoke_agent deft");
      const chats = spans.filter((s) => s.name === "chat mock");
      const tools = spans.filter((s) => s.name === "execute_tool bash");
      assert.deepEqual([turns.length, chats.length, tools.length], [2, 3, 1], all);

      // Every span of the session names it.
      for (const s of spans) {
        assert.deepEqual(
          s.attributes["gen_ai.conversation.id"],
          { stringValue: session },
          `${s.name} lacks the session's conversation id\n${all}`,
        );
      }

      // Each turn is the root of its own trace, and holds its model and tool calls.
      const [first, second] = turns.sort((a, b) =>
        chats.filter((c) => c.traceId === b.traceId)
          .length - chats.filter((c) => c.traceId === a.traceId).length
      );
      assert.notEqual(first.traceId, second.traceId, all);
      for (const turn of turns) assert.ok(!turn.parentSpanId, all);
      for (const s of [...chats, ...tools]) {
        assert.ok(turns.some((t) => t.traceId === s.traceId), all);
      }
      assert.equal(chats.filter((c) => c.traceId === first.traceId).length, 2, all);
      // The later turn links to the session's first.
      assert.deepEqual(first.links, [], all);
      assert.deepEqual(
        second.links.map((l) => [l.traceId, l.spanId]),
        [[first.traceId, first.spanId]],
        all,
      );

      // Counts and codes are integers.
      // The mock reports 100 + 20 tokens for a tool call, 50 + 10 for a text answer.
      assert.deepEqual(
        chats.map((c) => [
          c.attributes["gen_ai.usage.input_tokens"],
          c.attributes["gen_ai.usage.output_tokens"],
        ]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
        [
          [intValue(100), intValue(20)],
          [intValue(50), intValue(10)],
          [intValue(50), intValue(10)],
        ],
        all,
      );
      assert.deepEqual(first.attributes["deft.turn.steps"], intValue(2), all);
      assert.deepEqual(tools[0].attributes["deft.tool.error_code"], intValue(3), all);
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});

Deno.test({
  name: "an ACP session of two prompts: the client's sessionId on every span, a trace per prompt",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-trace-acp-");
    const collector = receiver();
    const mock = MockLLM.start([chatStream(chatText("one")), chatStream(chatText("two"))]);
    try {
      const { value: sessionId, code, run } = await withAcp(
        mock,
        ["--approval", "never"],
        [],
        async (ctx) => {
          await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
          const { sessionId } = await ctx.request("session/new", {
            cwd: dir.path,
            mcpServers: [],
          });
          for (const text of ["first", "second"]) {
            await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
          }
          return sessionId;
        },
        { env: collector.env },
      );
      assert.equal(code, 0, run.stderr());
      const spans = deftSpans(collector.spans());
      const all = summary(spans);
      const turns = spans.filter((s) => s.name === "invoke_agent deft");
      assert.equal(turns.length, 2, all);
      assert.equal(spans.filter((s) => s.name.startsWith("chat ")).length, 2, all);
      for (const s of spans) {
        assert.deepEqual(s.attributes["gen_ai.conversation.id"], { stringValue: sessionId }, all);
      }
      assert.notEqual(turns[0].traceId, turns[1].traceId, all);
      const linked = turns.filter((t) => t.links.length > 0);
      assert.equal(linked.length, 1, all);
      const first = turns.find((t) => t !== linked[0])!;
      assert.deepEqual(linked[0].links.map((l) => l.spanId), [first.spanId], all);
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});

Deno.test({
  name: "deft run: the run span carries the session's conversation id and an integer exit code",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-trace-run-");
    const home = join(dir.path, "home");
    await Deno.mkdir(home);
    const collector = receiver();
    const mock = MockLLM.start([chatText("Done.")]);
    try {
      const run = await runMocked(mock, "say done", dir.path, {
        extra: ["--json"],
        env: { HOME: home, ...collector.env },
      });
      assert.equal(run.code, 0, run.stderr);
      const session = JSON.parse(run.stdout).session_id;
      assert.ok(session, run.stdout);
      const spans = deftSpans(collector.spans());
      const all = summary(spans);
      assert.deepEqual(spans.map((s) => s.name).sort(), [
        "chat mock-model",
        "deft.run",
        "invoke_agent deft",
      ], all);
      for (const s of spans) {
        assert.deepEqual(s.attributes["gen_ai.conversation.id"], { stringValue: session }, all);
      }
      const runSpan = spans.find((s) => s.name === "deft.run")!;
      assert.deepEqual(runSpan.attributes["deft.exit_code"], intValue(0), all);
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});

Deno.test({
  name: "deft serve exports a span per tool call, without content",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-trace-serve-");
    const home = join(dir.path, "home");
    const work = join(dir.path, "work");
    await Deno.mkdir(home);
    await Deno.mkdir(work);
    const id = crypto.randomUUID().slice(0, 8);
    const markers = { command: `ARGMARK${id}`, output: `OUTMARK${id}`, file: `FILEMARK${id}` };
    await Deno.writeTextFile(join(work, "notes.txt"), `the file says ${markers.file}\n`);
    const [head, tail] = [markers.output.slice(0, 4), markers.output.slice(4)];
    const collector = receiver();
    try {
      const calls = [
        {
          id: "a",
          name: "bash",
          arguments: { command: `echo "${head}""${tail}" # ${markers.command}` },
        },
        {
          id: "b",
          name: "str_replace_based_edit_tool",
          arguments: { command: "view", path: join(work, "notes.txt") },
        },
        { id: "c", name: "bash", arguments: { command: "exit 4" } },
      ];
      const run = await runDeft(["serve", "-w", work], {
        cwd: work,
        stdin: calls.map((c) => JSON.stringify(c) + "\n").join(""),
        env: { HOME: home, ...collector.env },
      });
      assert.equal(run.code, 0, run.stderr);
      // The calls did run: their output went to the client.
      assert.match(run.stdout, new RegExp(markers.output));
      assert.match(run.stdout, new RegExp(markers.file));

      const spans = deftSpans(collector.spans());
      const all = summary(spans);
      assert.deepEqual(
        spans.map((s) => [
          s.name,
          s.attributes["gen_ai.tool.name"]?.stringValue,
          s.attributes["gen_ai.tool.call.id"]?.stringValue,
        ]).sort(),
        [
          ["execute_tool bash", "bash", "1"],
          ["execute_tool bash", "bash", "3"],
          ["execute_tool str_replace_based_edit_tool", "str_replace_based_edit_tool", "2"],
        ],
        all,
      );
      const failed = spans.find((s) => s.attributes["gen_ai.tool.call.id"]?.stringValue === "3")!;
      assert.deepEqual(failed.attributes["deft.tool.error_code"], intValue(4), all);
      // A tool server has no session: no conversation id.
      for (const s of spans) assert.equal(s.attributes["gen_ai.conversation.id"], undefined, all);
      for (const [what, marker] of Object.entries(markers)) {
        for (const body of collector.bodies) {
          assert.ok(!body.includes(marker), `the ${what} (${marker}) reached the collector`);
        }
      }
    } finally {
      await collector.close();
    }
  },
});

Deno.test({
  name: "deft mcp exports a span per tool call, named by the request's id, without content",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-trace-mcp-");
    const home = join(dir.path, "home");
    const work = join(dir.path, "work");
    await Deno.mkdir(home);
    await Deno.mkdir(work);
    const id = crypto.randomUUID().slice(0, 8);
    const output = `OUTMARK${id}`;
    const collector = receiver();
    try {
      const messages = [
        {
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "trace-test", version: "1" },
          },
        },
        { method: "notifications/initialized" },
        {
          id: 7,
          method: "tools/call",
          params: {
            name: "bash",
            arguments: { command: `echo "${output.slice(0, 4)}""${output.slice(4)}"` },
          },
        },
      ];
      const run = await runDeft(["mcp", "-w", work], {
        cwd: work,
        stdin: messages.map((m) => JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n").join(""),
        env: { HOME: home, ...collector.env },
      });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(output), "the call ran");
      const spans = deftSpans(collector.spans());
      const all = summary(spans);
      assert.deepEqual(
        spans.map((s) => [
          s.name,
          s.attributes["gen_ai.tool.name"]?.stringValue,
          s.attributes["gen_ai.tool.call.id"]?.stringValue,
        ]),
        [["execute_tool bash", "bash", "7"]],
        all,
      );
      for (const body of collector.bodies) assert.ok(!body.includes(output), body);
    } finally {
      await collector.close();
    }
  },
});
