/**
 * What a collector receives holds no content unless the user opts in.
 *
 * Promises guarded here:
 * - no tool output, error text, file text, prompt or argument value reaches the collector (spans,
 *   their events and status messages, logs, metrics) with content capture off; a failed call's
 *   status carries a code and an error kind from a fixed vocabulary: "a failed bash call, a failed
 *   edit and a failed model call export no content without the opt-in"
 * - a span whose work throws (the model call that gave up) is ended and exported with the error
 *   status: the same test, and tests/telemetry/tracing_test.ts in-process
 * - with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` the content does reach the
 *   collector: "with the content opt-in, the same run's output, arguments and errors are exported"
 *
 * Each marker below is planted once, where only its own kind of content can carry it: the
 * command's text, what the command prints (built by the shell, so the command's text never holds
 * it), a file's text, the prompt, an edit's argument, the model server's error message.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM, type MockReply } from "../../helpers/mock_llm.ts";
import { otlpReceiver, type OtlpSpan, STATUS_ERROR } from "../../helpers/otlp.ts";
import { tempDir } from "../../helpers/temp.ts";

function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
}

/** One run: a failing bash call, a view and a failing edit, then a model call that fails. */
async function exported(markers: Record<string, string>, extraEnv: Record<string, string>) {
  await using dir = await tempDir("deft-trace-content-");
  const home = join(dir.path, "home");
  const work = join(dir.path, "work");
  await Deno.mkdir(home);
  await Deno.mkdir(work);
  await Deno.writeTextFile(join(work, "notes.txt"), `the file says ${markers.file}\n`);
  const [head, tail] = [markers.output.slice(0, 4), markers.output.slice(4)];
  const [errHead, errTail] = [markers.stderr.slice(0, 4), markers.stderr.slice(4)];
  const modelError: MockReply = {
    status: 400,
    body: { error: { message: `bad request ${markers.model}`, type: "invalid_request_error" } },
  };
  const mock = MockLLM.start([
    chatToolCalls([
      ["bash", {
        command:
          `echo "${head}""${tail}"; echo "${errHead}""${errTail}" >&2; exit 3 # ${markers.command}`,
      }],
      ["str_replace_based_edit_tool", { command: "view", path: join(work, "notes.txt") }],
      ["str_replace_based_edit_tool", {
        command: "str_replace",
        path: join(work, "notes.txt"),
        old_str: markers.edit,
        new_str: "x",
      }],
    ]),
    modelError,
  ]);
  const collector = otlpReceiver();
  try {
    const run = await runMocked(mock, `Look around. ${markers.prompt}`, work, {
      env: {
        HOME: home,
        OTEL_DENO: "true",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        ...extraEnv,
      },
    });
    // The run did what the test meant: the tools ran and failed, the model's output was read.
    assert.equal(mock.requests.length, 2, run.stderr);
    const toolMessages = JSON.stringify(mock.requests[1].body.messages);
    for (const marker of [markers.output, markers.stderr, markers.file, markers.edit]) {
      assert.ok(toolMessages.includes(marker), `the model never saw ${marker}:\n${toolMessages}`);
    }
    assert.notEqual(run.code, 0, "the failed model call should fail the run");
    return { bodies: collector.posts, spans: collector.spans(), stderr: run.stderr };
  } finally {
    await mock.close();
    await collector.close();
  }
}

function markersFor(): Record<string, string> {
  const id = crypto.randomUUID().slice(0, 8);
  return {
    command: `ARGMARK${id}`,
    output: `OUTMARK${id}`,
    stderr: `ERRMARK${id}`,
    file: `FILEMARK${id}`,
    edit: `EDITMARK${id}`,
    prompt: `PROMPTMARK${id}`,
    model: `MODELMARK${id}`,
  };
}

Deno.test({
  name:
    "a failed bash call, a failed edit and a failed model call export no content without the opt-in",
  sanitizeResources: false,
  fn: async () => {
    const markers = markersFor();
    const { bodies, spans, stderr } = await exported(markers, {});
    const names = spans.map((s) => s.name);
    assert.ok(names.includes("execute_tool bash"), `${names}\n${stderr}`);
    for (const [what, marker] of Object.entries(markers)) {
      for (const { path, text } of bodies) {
        const at = text.indexOf(marker);
        assert.equal(
          at,
          -1,
          `the ${what} (${marker}) reached the collector at ${path}: ` +
            text.slice(Math.max(0, at - 300), at + 100),
        );
      }
    }
    // A failure is still told apart: the error status with a code and a kind, no text.
    const bash = spans.find((s) => s.name === "execute_tool bash")!;
    assert.equal(bash.status?.code, STATUS_ERROR, JSON.stringify(bash));
    assert.equal(bash.status?.message, "exit_status");
    assert.equal(attribute(bash, "error.type"), "exit_status");
    assert.equal(Number(attribute(bash, "deft.tool.error_code")), 3);
    const edits = spans.filter((s) => s.name === "execute_tool str_replace_based_edit_tool");
    assert.deepEqual(edits.map((s) => s.status?.code ?? 0).sort(), [0, STATUS_ERROR]);
    const failedEdit = edits.find((s) => s.status?.code === STATUS_ERROR)!;
    assert.equal(failedEdit.status?.message, "tool_error");
    // The model call that threw was ended and exported with the error status and its kind.
    const chats = spans.filter((s) => s.name === "chat mock-model");
    assert.equal(chats.length, 2, JSON.stringify(chats));
    const failedChat = chats.find((s) => s.status?.code === STATUS_ERROR);
    assert.ok(failedChat, `no failed model-call span: ${JSON.stringify(chats)}`);
    assert.match(String(failedChat.status?.message), /^[A-Za-z][A-Za-z0-9_]*$/);
    assert.equal(attribute(failedChat, "error.type"), failedChat.status?.message);
  },
});

Deno.test({
  name: "with the content opt-in, the same run's output, arguments and errors are exported",
  sanitizeResources: false,
  fn: async () => {
    const markers = markersFor();
    const { bodies, spans } = await exported(markers, {
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
    });
    const traces = bodies.filter((b) => b.path.endsWith("/traces")).map((b) => b.text).join("\n");
    for (const [what, marker] of Object.entries(markers)) {
      assert.ok(traces.includes(marker), `the ${what} (${marker}) was not exported`);
    }
    const bash = spans.find((s) => s.name === "execute_tool bash")!;
    assert.match(String(bash.status?.message), new RegExp(`^exit_status: .*${markers.stderr}`));
    assert.match(String(attribute(bash, "gen_ai.tool.call.result")), new RegExp(markers.output));
    const chat = spans.find((s) => s.name === "chat mock-model" && s.status?.code === STATUS_ERROR);
    assert.match(String(chat?.status?.message), new RegExp(markers.model));
  },
});
