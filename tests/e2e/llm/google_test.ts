import assert from "node:assert/strict";
import type { ResolvedModel, ResolvedProvider } from "../../../src/config/resolve.ts";
import type { ModelConfig } from "../../../src/config/schema.ts";
import { createClient } from "../../../src/llm/client.ts";
import { GoogleClient } from "../../../src/llm/google.ts";
import { errorStatus, isRetryable, retryAfterMs } from "../../../src/llm/retry.ts";
import type { LLMMessage } from "../../../src/llm/types.ts";
import type { ToolDefinition } from "../../../src/tools/schema.ts";
import { runMocked } from "../../helpers/deft.ts";
import { geminiError, geminiFunctionCalls, geminiText } from "../../helpers/mock_llm.ts";
import { BASH_TOOL, providerModel, SYSTEM, TASK, withMock } from "../../helpers/providers.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const KEY = "gm-test-SECRET-0123456789";

function gemini(
  baseUrl: string,
  settings: Partial<ModelConfig> = {},
  provider: Partial<ResolvedProvider> = {},
): ResolvedModel {
  return providerModel(
    {
      provider: "google",
      keyVariable: "GOOGLE_API_KEY",
      api_key: KEY,
      base_url: baseUrl,
      ...provider,
    },
    "gemini-x",
    settings,
  );
}

const TOOLS: ToolDefinition[] = [
  { ...BASH_TOOL, parameters: { ...BASH_TOOL.parameters, additionalProperties: false } },
  {
    name: "json_set",
    description: "Set a value.",
    parameters: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { value: { description: "Any JSON value." } },
      required: ["value"],
    },
  },
  {
    name: "task_done",
    description: "Finish.",
    parameters: { type: "object", properties: {}, required: [] },
  },
];

Deno.test("google: a tool call round trip in Gemini's wire format", async () => {
  await withMock([
    geminiFunctionCalls(
      [["bash", { command: "ls" }], ["bash", { command: "false" }]],
      "Let me look.",
      { thoughtSignature: "c2lnLTE=" },
    ),
    geminiText("All done."),
  ], async (mock) => {
    const client = new GoogleClient(gemini(mock.url, {
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      max_tokens: 1000,
      candidate_count: 1,
      stop_sequences: ["END"],
    }));
    const messages: LLMMessage[] = [
      { role: "system", content: SYSTEM },
      { role: "user", content: TASK },
    ];
    const first = await client.chat(messages, TOOLS);
    assert.equal(first.content, "Let me look.");
    assert.deepEqual(first.tool_calls.map((c) => [c.name, c.arguments]), [
      ["bash", { command: "ls" }],
      ["bash", { command: "false" }],
    ]);
    const [a, b] = first.tool_calls.map((c) => c.call_id);
    assert.ok(a && b && a !== b, "Gemini sent no ids, so each call needs its own");
    assert.deepEqual(first.usage, {
      input_tokens: 100,
      output_tokens: 25,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 10,
      reasoning_tokens: 5,
    });
    assert.equal(first.finish_reason, "STOP");
    assert.equal(first.model, "mock-gemini");

    const req = mock.requests[0];
    assert.equal(req.path, "/v1/models/gemini-x:generateContent");
    assert.equal(req.headers.get("x-goog-api-key"), KEY);
    assert.deepEqual(req.body.systemInstruction, { parts: [{ text: SYSTEM }] });
    assert.deepEqual(req.body.contents, [{ role: "user", parts: [{ text: TASK }] }]);
    assert.deepEqual(req.body.generationConfig, {
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 1000,
      candidateCount: 1,
      stopSequences: ["END"],
    });
    const [bash, jsonSet, done] = req.body.tools[0].functionDeclarations;
    assert.equal(req.body.tools.length, 1, "one Tool holds every declaration");
    assert.deepEqual(bash, {
      name: "bash",
      description: "Run a command.",
      parametersJsonSchema: TOOLS[0].parameters,
    });
    // JSON Schema as written, minus the dialect marker: an untyped value stays untyped.
    assert.deepEqual(jsonSet.parametersJsonSchema, {
      type: "object",
      properties: { value: { description: "Any JSON value." } },
      required: ["value"],
    });
    // No parameters at all for a tool that takes none (Gemini rejects an empty OBJECT).
    assert.deepEqual(done, { name: "task_done", description: "Finish." });

    messages.push(
      { role: "assistant", content: first.content, tool_calls: first.tool_calls },
      { role: "tool", call_id: a, name: "bash", content: "calc.py", is_error: false },
      { role: "tool", call_id: b, name: "bash", content: "Error: exit 1", is_error: true },
    );
    const second = await client.chat(messages, TOOLS);
    assert.equal(second.content, "All done.");
    assert.deepEqual(second.tool_calls, []);
    assert.deepEqual(second.usage, {
      input_tokens: 50,
      output_tokens: 10,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      reasoning_tokens: 0,
    });
    // The model turn comes back whole, signature included; the results form one user turn,
    // and ids Deft made up are not sent.
    assert.deepEqual(mock.requests[1].body.contents, [
      { role: "user", parts: [{ text: TASK }] },
      {
        role: "model",
        parts: [
          { text: "Let me look." },
          { functionCall: { name: "bash", args: { command: "ls" } }, thoughtSignature: "c2lnLTE=" },
          { functionCall: { name: "bash", args: { command: "false" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "bash", response: { output: "calc.py" } } },
          { functionResponse: { name: "bash", response: { error: "Error: exit 1" } } },
        ],
      },
    ]);
  });
});

Deno.test("google: call ids Gemini sends are kept and sent back", async () => {
  await withMock([
    geminiFunctionCalls([["bash", { command: "pwd" }]], "", { ids: ["fc-7"] }),
    geminiText("ok"),
  ], async (mock) => {
    const client = new GoogleClient(gemini(mock.url));
    const messages: LLMMessage[] = [{ role: "user", content: TASK }];
    const first = await client.chat(messages, TOOLS);
    assert.equal(first.tool_calls[0].call_id, "fc-7");
    messages.push(
      { role: "assistant", content: "", tool_calls: first.tool_calls },
      { role: "tool", call_id: "fc-7", name: "bash", content: "/repo", is_error: false },
    );
    await client.chat(messages, TOOLS);
    const [, model, results] = mock.requests[1].body.contents;
    assert.deepEqual(model.parts, [
      { functionCall: { id: "fc-7", name: "bash", args: { command: "pwd" } } },
    ]);
    assert.deepEqual(results.parts, [
      { functionResponse: { id: "fc-7", name: "bash", response: { output: "/repo" } } },
    ]);
    assert.equal(mock.requests[1].body.systemInstruction, undefined);
  });
});

Deno.test("google: HTTP errors keep their status; 429 is retried after Gemini's delay, 400 is not", async () => {
  await withMock([geminiError(429, "2s"), geminiError(400)], async (mock) => {
    const client = new GoogleClient(gemini(mock.url));
    const messages: LLMMessage[] = [{ role: "user", content: TASK }];
    const quota = await client.chat(messages, []).then(() => undefined, (e) => e);
    assert.equal(errorStatus(quota), 429);
    assert.ok(isRetryable(quota));
    assert.equal(retryAfterMs(quota), 2000);
    assert.match(quota.message, /Gemini API error 429: RESOURCE_EXHAUSTED: mock error 429/);
    const bad = await client.chat(messages, []).then(() => undefined, (e) => e);
    assert.equal(errorStatus(bad), 400);
    assert.ok(!isRetryable(bad));
  });
  await withMock([geminiError(503), geminiText("recovered")], async (mock) => {
    const client = createClient(gemini(mock.url, { max_retries: 2 }), undefined, 1);
    const reply = await client.chat([{ role: "user", content: TASK }], []);
    assert.equal(reply.content, "recovered");
    assert.equal(mock.requests.length, 2);
  });
});

Deno.test("google: a blocked prompt is a clear error that is not retried", async () => {
  await withMock([{ body: { promptFeedback: { blockReason: "SAFETY" } } }], async (mock) => {
    const client = new GoogleClient(gemini(mock.url));
    const error = await client.chat([{ role: "user", content: TASK }], []).then(
      () => undefined,
      (e) => e,
    );
    assert.match(error.message, /Gemini refused the prompt \(SAFETY\)/);
    assert.ok(!isRetryable(error));
  });
});

Deno.test("google: the API version comes from the base URL or api_version", async () => {
  await withMock([geminiText("a"), geminiText("b")], async (mock) => {
    const messages: LLMMessage[] = [{ role: "user", content: TASK }];
    await new GoogleClient(gemini(`${mock.url}/v1beta/`)).chat(messages, []);
    await new GoogleClient(gemini(mock.url, {}, { api_version: "v1alpha" })).chat(messages, []);
    assert.deepEqual(mock.requests.map((r) => r.path), [
      "/v1beta/models/gemini-x:generateContent",
      "/v1alpha/models/gemini-x:generateContent",
    ]);
  });
});

Deno.test("google: deft run end to end, an error result then task_done", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  await withMock([
    geminiFunctionCalls([["no_such_tool", {}]]),
    geminiFunctionCalls([["task_done", {}]], "Nothing to change."),
  ], async (mock) => {
    const r = await runMocked(mock, "check the repository", repo, {
      provider: "google",
      model: "gemini-x",
      baseUrl: mock.url,
      apiKey: KEY,
      extra: ["--json"],
      cwd: home,
      env: { HOME: home, DEFT_RETRY_BASE_MS: "5" },
    });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.success, true);
    assert.equal(summary.usage.input_tokens, 200);
    assert.equal(summary.usage.cache_read_input_tokens, 20);
    assert.equal(summary.usage.reasoning_tokens, 10);
    const first = mock.requests[0].body;
    assert.match(first.systemInstruction.parts[0].text, /\S/);
    for (const d of first.tools[0].functionDeclarations) {
      assert.equal(d.parameters, undefined, d.name);
      assert.equal(d.name === "task_done", d.parametersJsonSchema === undefined, d.name);
    }
    const last = mock.requests[1].body.contents.at(-1);
    assert.equal(last.role, "user");
    assert.equal(last.parts[0].functionResponse.name, "no_such_tool");
    assert.match(last.parts[0].functionResponse.response.error, /Tool 'no_such_tool' not found/);
  });
});

Deno.test("google: a user's image goes as an inlineData part beside the text", async () => {
  await withMock([geminiText("a cat")], async (mock) => {
    const client = new GoogleClient(gemini(mock.url));
    const image = { mediaType: "image/webp" as const, base64: "UklGRgAAAABXRUJQ" };
    await client.chat([{ role: "user", content: "what is it?", images: [image] }], TOOLS);
    const [user] = mock.requests[0].body.contents;
    assert.deepEqual(user.parts, [
      { text: "what is it?" },
      { inlineData: { mimeType: "image/webp", data: "UklGRgAAAABXRUJQ" } },
    ]);
  });
});
