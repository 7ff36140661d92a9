import assert from "node:assert/strict";
import type { ResolvedModel, ResolvedProvider } from "../../../src/config/resolve.ts";
import type { ModelConfig } from "../../../src/config/schema.ts";
import { createClient } from "../../../src/llm/client.ts";
import { OllamaClient } from "../../../src/llm/ollama.ts";
import { errorStatus, isRetryable } from "../../../src/llm/retry.ts";
import type { LLMMessage } from "../../../src/llm/types.ts";
import type { ToolDefinition } from "../../../src/tools/schema.ts";
import { runMocked } from "../../helpers/deft.ts";
import { ollamaError, ollamaText, ollamaToolCalls } from "../../helpers/mock_llm.ts";
import { BASH_TOOL, providerModel, SYSTEM, TASK, withMock } from "../../helpers/providers.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

function ollama(
  baseUrl: string | undefined,
  settings: Partial<ModelConfig> = {},
  provider: Partial<ResolvedProvider> = {},
): ResolvedModel {
  return providerModel(
    { provider: "ollama", keyVariable: "OLLAMA_API_KEY", base_url: baseUrl, ...provider },
    "llama3.1",
    settings,
  );
}

const TOOLS: ToolDefinition[] = [BASH_TOOL];

Deno.test("ollama: a tool call round trip keeps every assistant turn", async () => {
  await withMock([
    ollamaToolCalls([["bash", { command: "ls" }], ["bash", { command: "false" }]], "Looking."),
    ollamaToolCalls([["bash", { command: "cat calc.py" }]]),
    ollamaText("All done."),
  ], async (mock) => {
    const client = new OllamaClient(ollama(mock.url, {
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      max_tokens: 1000,
      stop_sequences: ["END"],
      context_window: 32768,
    }));
    const messages: LLMMessage[] = [
      { role: "system", content: SYSTEM },
      { role: "user", content: TASK },
    ];
    const first = await client.chat(messages, TOOLS);
    assert.equal(first.content, "Looking.");
    assert.deepEqual(first.tool_calls.map((c) => [c.name, c.arguments]), [
      ["bash", { command: "ls" }],
      ["bash", { command: "false" }],
    ]);
    const [a, b] = first.tool_calls.map((c) => c.call_id);
    assert.ok(a && b && a !== b, "Ollama sends no ids, so each call needs its own");
    assert.deepEqual(first.usage, {
      input_tokens: 100,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      reasoning_tokens: 0,
    });
    assert.equal(first.finish_reason, "stop");
    assert.equal(first.model, "mock-llama");

    const req = mock.requests[0];
    assert.equal(req.path, "/api/chat");
    assert.equal(req.headers.get("authorization"), null);
    assert.equal(req.body.model, "llama3.1");
    assert.equal(req.body.stream, false);
    assert.deepEqual(req.body.messages, [
      { role: "system", content: SYSTEM },
      { role: "user", content: TASK },
    ]);
    assert.deepEqual(req.body.tools, [{
      type: "function",
      function: { name: "bash", description: "Run a command.", parameters: TOOLS[0].parameters },
    }]);
    assert.deepEqual(req.body.options, {
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      num_predict: 1000,
      stop: ["END"],
      num_ctx: 32768,
    });

    messages.push(
      { role: "assistant", content: first.content, tool_calls: first.tool_calls },
      { role: "tool", call_id: a, name: "bash", content: "calc.py", is_error: false },
      { role: "tool", call_id: b, name: "bash", content: "Error: exit 1", is_error: true },
    );
    const second = await client.chat(messages, TOOLS);
    messages.push(
      { role: "assistant", content: second.content, tool_calls: second.tool_calls },
      {
        role: "tool",
        call_id: second.tool_calls[0].call_id,
        name: "bash",
        content: "def add(a, b): ...",
        is_error: false,
      },
    );
    const third = await client.chat(messages, TOOLS);
    assert.equal(third.content, "All done.");
    assert.deepEqual(third.tool_calls, []);
    assert.equal(third.usage.input_tokens, 50);
    // Both earlier assistant turns, with their calls, and every result, in order.
    assert.deepEqual(mock.requests[2].body.messages, [
      { role: "system", content: SYSTEM },
      { role: "user", content: TASK },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          { function: { name: "bash", arguments: { command: "ls" } } },
          { function: { name: "bash", arguments: { command: "false" } } },
        ],
      },
      { role: "tool", content: "calc.py", tool_name: "bash" },
      { role: "tool", content: "Error: exit 1", tool_name: "bash" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ function: { name: "bash", arguments: { command: "cat calc.py" } } }],
      },
      { role: "tool", content: "def add(a, b): ...", tool_name: "bash" },
    ]);
  });
});

Deno.test("ollama: HTTP errors carry their status; 429 is retryable, 400 is not", async () => {
  await withMock([
    ollamaError(429),
    ollamaError(400),
    { status: 502, headers: { "content-type": "text/html" }, body: "<h1>Bad gateway</h1>" },
  ], async (mock) => {
    const client = new OllamaClient(ollama(mock.url));
    const messages: LLMMessage[] = [{ role: "user", content: TASK }];
    const busy = await client.chat(messages, []).then(() => undefined, (e) => e);
    assert.equal(errorStatus(busy), 429);
    assert.ok(isRetryable(busy));
    assert.match(busy.message, /Ollama error 429: mock error 429/);
    const bad = await client.chat(messages, []).then(() => undefined, (e) => e);
    assert.equal(errorStatus(bad), 400);
    assert.ok(!isRetryable(bad));
    // A proxy's HTML error page: the status survives, and the SDK prints nothing (stdout
    // carries `deft run --json`).
    const printed: unknown[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => printed.push(args);
    let gateway;
    try {
      gateway = await client.chat(messages, []).then(() => undefined, (e) => e);
    } finally {
      console.log = log;
    }
    assert.equal(errorStatus(gateway), 502);
    assert.ok(isRetryable(gateway));
    assert.match(gateway.message, /Bad gateway/);
    assert.deepEqual(printed, []);
  });
  await withMock([ollamaError(503), ollamaText("recovered")], async (mock) => {
    const client = createClient(ollama(mock.url, { max_retries: 2 }), undefined, 1);
    const reply = await client.chat([{ role: "user", content: TASK }], []);
    assert.equal(reply.content, "recovered");
    assert.equal(mock.requests.length, 2);
  });
});

Deno.test("ollama: the server root from /v1 URLs, OLLAMA_HOST, and a key as bearer token", async () => {
  await withMock([ollamaText("a"), ollamaText("b")], async (mock) => {
    const messages: LLMMessage[] = [{ role: "user", content: TASK }];
    await new OllamaClient(ollama(`${mock.url}/v1/`, {}, { api_key: "ol-key" })).chat(messages, []);
    const saved = Deno.env.get("OLLAMA_HOST");
    Deno.env.set("OLLAMA_HOST", mock.url.replace("http://", ""));
    try {
      await new OllamaClient(ollama(undefined)).chat(messages, []);
    } finally {
      if (saved === undefined) Deno.env.delete("OLLAMA_HOST");
      else Deno.env.set("OLLAMA_HOST", saved);
    }
    assert.deepEqual(mock.requests.map((r) => r.path), ["/api/chat", "/api/chat"]);
    assert.equal(mock.requests[0].headers.get("authorization"), "Bearer ol-key");
    assert.equal(mock.requests[0].body.options, undefined);
  });
});

Deno.test("ollama: an aborted call stops at once", async () => {
  await withMock([{ ...ollamaText("late"), delayMs: 6000 }], async (mock) => {
    const client = new OllamaClient(ollama(mock.url));
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(client.chat([{ role: "user", content: TASK }], [], controller.signal));
    // The answer comes after 6 s; an abort that works returns long before (slack for load).
    assert.ok(Date.now() - started < 4000, "the request outlived its abort signal");
  });
});

Deno.test("ollama: deft run end to end, an error result then task_done", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  await withMock([
    ollamaToolCalls([["no_such_tool", {}]], "Trying a tool."),
    ollamaToolCalls([["task_done", {}]], "Nothing to change."),
  ], async (mock) => {
    const r = await runMocked(mock, "check the repository", repo, {
      provider: "ollama",
      model: "llama3.1",
      baseUrl: mock.url,
      apiKey: null,
      extra: ["--json"],
      cwd: home,
      env: { HOME: home, DEFT_RETRY_BASE_MS: "5" },
    });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.success, true);
    assert.equal(summary.usage.input_tokens, 200);
    assert.equal(summary.usage.output_tokens, 40);
    const messages = mock.requests[1].body.messages;
    assert.equal(messages[0].role, "system");
    assert.deepEqual(messages.slice(2).map((m: { role: string }) => m.role), ["assistant", "tool"]);
    assert.equal(messages[2].content, "Trying a tool.");
    assert.equal(messages[2].tool_calls[0].function.name, "no_such_tool");
    assert.equal(messages[3].tool_name, "no_such_tool");
    assert.match(messages[3].content, /Tool 'no_such_tool' not found/);
  });
});
