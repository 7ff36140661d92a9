import assert from "node:assert/strict";
import { ConfigError } from "../../../src/config/load.ts";
import type { ResolvedModel, ResolvedProvider } from "../../../src/config/resolve.ts";
import type { ModelConfig } from "../../../src/config/schema.ts";
import { azureClient } from "../../../src/llm/azure.ts";
import { createClient, providerClient } from "../../../src/llm/client.ts";
import { errorStatus, isRetryable } from "../../../src/llm/retry.ts";
import type { LLMMessage } from "../../../src/llm/types.ts";
import type { ToolDefinition } from "../../../src/tools/schema.ts";
import { mockRunArgs, runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, httpError, type MockLLM } from "../../helpers/mock_llm.ts";
import { BASH_TOOL, providerModel, SYSTEM, TASK, withMock } from "../../helpers/providers.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const KEY = "az-test-SECRET-0123456789";
const VERSION = "2024-10-21";

function azure(
  baseUrl: string | undefined,
  settings: Partial<ModelConfig> = {},
  provider: Partial<ResolvedProvider> = {},
): ResolvedModel {
  return providerModel(
    {
      provider: "azure",
      keyVariable: "AZURE_API_KEY",
      api_key: KEY,
      base_url: baseUrl,
      api_version: VERSION,
      ...provider,
    },
    "gpt-4o-prod",
    settings,
  );
}

const TOOLS: ToolDefinition[] = [BASH_TOOL];

// A pass-through in front of `mock` that keeps each request's query string, which MockLLM does
// not record (Azure sends the API version there).
async function withQueries(mock: MockLLM, body: (url: string, queries: string[]) => Promise<void>) {
  const queries: string[] = [];
  const front = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    queries.push(url.search);
    return await fetch(`${mock.url}${url.pathname}${url.search}`, {
      method: req.method,
      headers: req.headers,
      body: await req.arrayBuffer(),
    });
  });
  try {
    await body(`http://127.0.0.1:${front.addr.port}`, queries);
  } finally {
    await front.shutdown();
  }
}

// Runs `body` with the API-version variables unset.
async function withoutVersionEnv(body: () => Promise<void> | void) {
  const names = ["AZURE_API_VERSION", "OPENAI_API_VERSION"];
  const saved = names.map((n) => Deno.env.get(n));
  for (const n of names) Deno.env.delete(n);
  try {
    await body();
  } finally {
    names.forEach((n, i) => {
      const value = saved[i];
      if (value === undefined) Deno.env.delete(n);
      else Deno.env.set(n, value);
    });
  }
}

Deno.test("azure: a tool call round trip through the deployment URL", async () => {
  await withMock([
    chatToolCalls([["bash", { command: "ls" }], ["bash", { command: "false" }]], "Looking."),
    chatText("All done."),
  ], async (mock) => {
    await withQueries(mock, async (url, queries) => {
      const client = azureClient(azure(url, { max_tokens: 1000, temperature: 0.2 }));
      assert.equal(client.provider, "azure");
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
      assert.deepEqual(first.usage, {
        input_tokens: 100,
        output_tokens: 20,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 10,
        reasoning_tokens: 5,
      });

      const req = mock.requests[0];
      assert.equal(req.path, "/openai/deployments/gpt-4o-prod/chat/completions");
      assert.equal(queries[0], `?api-version=${VERSION}`);
      assert.equal(req.headers.get("api-key"), KEY);
      assert.equal(req.headers.get("authorization"), null);
      assert.deepEqual(req.body.messages, [
        { role: "system", content: SYSTEM },
        { role: "user", content: TASK },
      ]);
      // Azure takes Chat Completions tools without OpenAI's strict mode.
      assert.deepEqual(req.body.tools, [{
        type: "function",
        function: { name: "bash", description: "Run a command.", parameters: TOOLS[0].parameters },
      }]);
      assert.equal(req.body.max_tokens, 1000);
      assert.equal(req.body.max_completion_tokens, undefined);
      assert.equal(req.body.temperature, 0.2);

      const [a, b] = first.tool_calls.map((c) => c.call_id);
      messages.push(
        { role: "assistant", content: first.content, tool_calls: first.tool_calls },
        { role: "tool", call_id: a, name: "bash", content: "calc.py", is_error: false },
        { role: "tool", call_id: b, name: "bash", content: "Error: exit 1", is_error: true },
      );
      const second = await client.chat(messages, TOOLS);
      assert.equal(second.content, "All done.");
      assert.equal(second.usage.input_tokens, 50);
      const sent = mock.requests[1].body.messages;
      assert.deepEqual(sent.slice(2), [
        {
          role: "assistant",
          content: "Looking.",
          tool_calls: [
            { id: a, type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
            {
              id: b,
              type: "function",
              function: { name: "bash", arguments: '{"command":"false"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: a, content: "calc.py" },
        { role: "tool", tool_call_id: b, content: "Error: exit 1" },
      ]);
      assert.deepEqual(queries, [`?api-version=${VERSION}`, `?api-version=${VERSION}`]);
    });
  });
});

Deno.test("azure: max_completion_tokens for reasoning deployments or when configured", async () => {
  await withMock([chatText("a"), chatText("b")], async (mock) => {
    const messages: LLMMessage[] = [{ role: "user", content: TASK }];
    await azureClient(azure(mock.url, { model: "o4-mini", max_tokens: 2000, temperature: 0.2 }))
      .chat(messages, []);
    await azureClient(azure(mock.url, { max_completion_tokens: 3000 })).chat(messages, []);
    const [reasoning, configured] = mock.requests.map((r) => r.body);
    assert.equal(mock.requests[0].path, "/openai/deployments/o4-mini/chat/completions");
    assert.equal(reasoning.max_completion_tokens, 2000);
    assert.equal(reasoning.max_tokens, undefined);
    assert.equal(reasoning.temperature, undefined, "reasoning models refuse temperature");
    assert.equal(configured.max_completion_tokens, 3000);
    assert.equal(configured.max_tokens, undefined);
  });
});

Deno.test("azure: endpoint forms: with /openai already, and the version-less v1 API", async () => {
  await withMock([chatText("a"), chatText("b")], async (mock) => {
    const messages: LLMMessage[] = [{ role: "user", content: TASK }];
    await azureClient(azure(`${mock.url}/openai/`)).chat(messages, []);
    await withoutVersionEnv(async () => {
      const v1 = azureClient(azure(`${mock.url}/openai/v1`, {}, { api_version: undefined }));
      await v1.chat(messages, []);
    });
    assert.deepEqual(mock.requests.map((r) => r.path), [
      "/openai/deployments/gpt-4o-prod/chat/completions",
      "/openai/v1/chat/completions",
    ]);
    assert.equal(mock.requests[1].body.model, "gpt-4o-prod");
  });
});

Deno.test("azure: HTTP errors keep their status; 429 is retryable, 400 is not", async () => {
  await withMock([httpError(429), httpError(400)], async (mock) => {
    const client = azureClient(azure(mock.url));
    const messages: LLMMessage[] = [{ role: "user", content: TASK }];
    const busy = await client.chat(messages, []).then(() => undefined, (e) => e);
    assert.equal(errorStatus(busy), 429);
    assert.ok(isRetryable(busy));
    const bad = await client.chat(messages, []).then(() => undefined, (e) => e);
    assert.equal(errorStatus(bad), 400);
    assert.ok(!isRetryable(bad));
  });
  await withMock([httpError(503), chatText("recovered")], async (mock) => {
    const client = createClient(azure(mock.url, { max_retries: 2 }), undefined, 1);
    const reply = await client.chat([{ role: "user", content: TASK }], []);
    assert.equal(reply.content, "recovered");
    assert.equal(mock.requests.length, 2);
  });
});

Deno.test("azure: a missing endpoint or API version is a ConfigError that says what to set", async () => {
  await withoutVersionEnv(() => {
    assert.throws(
      () => providerClient(azure(undefined)),
      (e) => e instanceof ConfigError && /AZURE_BASE_URL/.test(e.message),
    );
    assert.throws(
      () => providerClient(azure("https://res.openai.azure.com", {}, { api_version: undefined })),
      (e) =>
        e instanceof ConfigError && /api_version/.test(e.message) &&
        /AZURE_API_VERSION/.test(e.message),
    );
    Deno.env.set("AZURE_API_VERSION", VERSION);
    assert.ok(
      providerClient(azure("https://res.openai.azure.com", {}, { api_version: undefined })),
    );
  });
});

Deno.test("azure: deft run end to end, an error result then task_done", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const args = (url: string) =>
    mockRunArgs({ url }, "check the repository", repo, {
      provider: "azure",
      model: "gpt-4o-prod",
      baseUrl: url,
      apiKey: KEY,
      extra: ["--json"],
    });
  await withMock([
    chatToolCalls([["no_such_tool", {}]]),
    chatToolCalls([["task_done", {}]], "Nothing to change."),
  ], async (mock) => {
    const r = await runDeft(args(mock.url), {
      cwd: home,
      env: { HOME: home, DEFT_RETRY_BASE_MS: "5", AZURE_API_VERSION: VERSION },
    });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.success, true);
    assert.equal(summary.usage.input_tokens, 200);
    assert.equal(summary.usage.cache_read_input_tokens, 20);
    assert.equal(summary.usage.reasoning_tokens, 10);
    assert.equal(mock.requests[0].path, "/openai/deployments/gpt-4o-prod/chat/completions");
    assert.equal(mock.requests[0].headers.get("api-key"), KEY);
    const tool = mock.requests[1].body.messages.at(-1);
    assert.equal(tool.role, "tool");
    assert.match(tool.content, /Tool 'no_such_tool' not found/);
  });
  const noVersion = await runDeft(args("https://res.openai.azure.com"), {
    cwd: home,
    env: { HOME: home, AZURE_API_VERSION: "", OPENAI_API_VERSION: "" },
  });
  assert.equal(noVersion.code, 2, noVersion.stderr);
  assert.match(noVersion.stderr, /needs an API version: set model_providers\.<name>\.api_version/);
});
