/**
 * Provider clients the agent tests don't reach: OpenRouter's attribution headers, Doubao's
 * required endpoint, and Anthropic's error paths — each through the official SDK speaking HTTP to
 * the local mock.
 */
import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/load.ts";
import type { ResolvedModel } from "../../src/config/resolve.ts";
import type { ProviderName } from "../../src/config/providers.ts";
import { createClient, providerClient } from "../../src/llm/client.ts";
import { LLMCallError } from "../../src/llm/retry.ts";
import type { LLMMessage } from "../../src/llm/types.ts";
import { anthropicToolUses, chatText, MockLLM, type MockReply } from "../helpers/mock_llm.ts";

const KEY = "prov-test-SECRET-0123456789";
const MESSAGES: LLMMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Say hi." },
];

function model(provider: ProviderName, baseUrl: string | undefined, maxRetries = 0): ResolvedModel {
  return {
    name: "m",
    provider: { provider, keyVariable: "TEST_KEY", api_key: KEY, base_url: baseUrl },
    settings: {
      model_provider: provider,
      model: "mock-model",
      max_tokens: 64,
      parallel_tool_calls: false,
      max_retries: maxRetries,
    },
  };
}

/** An error in the Anthropic API's shape. */
function anthropicError(status: number, type: string, headers: Record<string, string> = {}) {
  return {
    status,
    headers,
    body: { type: "error", error: { type, message: `mock ${type}` } },
  } satisfies MockReply;
}

async function withEnv<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
  try {
    return await body();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  }
}

Deno.test("openrouter: the attribution headers from the environment reach the server", async () => {
  const mock = MockLLM.start([chatText("hi")]);
  try {
    await withEnv(
      { OPENROUTER_SITE_URL: "https://deft.example", OPENROUTER_SITE_NAME: "Deft tests" },
      async () => {
        const reply = await providerClient(model("openrouter", `${mock.url}/api/v1`)).chat(
          MESSAGES,
          [],
        );
        assert.equal(reply.content, "hi");
      },
    );
    const req = mock.requests[0];
    assert.equal(req.path, "/api/v1/chat/completions");
    assert.equal(req.headers.get("http-referer"), "https://deft.example");
    assert.equal(req.headers.get("x-title"), "Deft tests");
    assert.equal(req.headers.get("authorization"), `Bearer ${KEY}`);
  } finally {
    await mock.close();
  }
});

Deno.test("openrouter: without the variables no attribution header is sent", async () => {
  const mock = MockLLM.start([chatText("hi")]);
  try {
    const before = [Deno.env.get("OPENROUTER_SITE_URL"), Deno.env.get("OPENROUTER_SITE_NAME")];
    Deno.env.delete("OPENROUTER_SITE_URL");
    Deno.env.delete("OPENROUTER_SITE_NAME");
    try {
      await providerClient(model("openrouter", `${mock.url}/api/v1`)).chat(MESSAGES, []);
    } finally {
      if (before[0] !== undefined) Deno.env.set("OPENROUTER_SITE_URL", before[0]);
      if (before[1] !== undefined) Deno.env.set("OPENROUTER_SITE_NAME", before[1]);
    }
    assert.equal(mock.requests[0].headers.get("http-referer"), null);
    assert.equal(mock.requests[0].headers.get("x-title"), null);
  } finally {
    await mock.close();
  }
});

Deno.test("doubao: speaks Chat Completions to the endpoint it is given", async () => {
  const mock = MockLLM.start([chatText("你好")]);
  try {
    const reply = await providerClient(model("doubao", `${mock.url}/api/v3`)).chat(MESSAGES, []);
    assert.equal(reply.content, "你好");
    const req = mock.requests[0];
    assert.equal(req.path, "/api/v3/chat/completions");
    assert.equal(req.headers.get("authorization"), `Bearer ${KEY}`);
    assert.equal(req.body.model, "mock-model");
    assert.deepEqual(req.body.messages.map((m: { role: string }) => m.role), ["system", "user"]);
  } finally {
    await mock.close();
  }
});

Deno.test("doubao: without a base URL, a configuration error that says where to set it", () => {
  assert.throws(
    () => providerClient(model("doubao", undefined)),
    (e: unknown) =>
      e instanceof ConfigError && /DOUBAO_BASE_URL/.test(e.message) &&
      /--model-base-url/.test(e.message),
  );
});

Deno.test("anthropic: a 400 fails at once with the server's message, not retried", async () => {
  const mock = MockLLM.start([anthropicError(400, "invalid_request_error")]);
  try {
    const client = createClient(model("anthropic", mock.url, 3), undefined, 1);
    await assert.rejects(client.chat(MESSAGES, []), (e: unknown) => {
      assert.ok(e instanceof LLMCallError);
      assert.equal(e.status, 400);
      assert.match(e.message, /invalid_request_error|mock invalid_request_error/);
      assert.match(e.message, /not retried/);
      return true;
    });
    assert.equal(mock.requests.length, 1);
  } finally {
    await mock.close();
  }
});

Deno.test("anthropic: a 401 says the key was refused, not retried", async () => {
  const mock = MockLLM.start([anthropicError(401, "authentication_error")]);
  try {
    const client = createClient(model("anthropic", mock.url, 3), undefined, 1);
    await assert.rejects(client.chat(MESSAGES, []), (e: unknown) => {
      assert.ok(e instanceof LLMCallError);
      assert.equal(e.status, 401);
      assert.match(e.message, /authentication_error/);
      return true;
    });
    assert.equal(mock.requests.length, 1);
  } finally {
    await mock.close();
  }
});

Deno.test("anthropic: 529 overloaded is retried by Deft's policy alone — the SDK's retries are off", async () => {
  // Always overloaded. With max_retries 2 Deft makes 3 attempts; if the SDK retried too, each of
  // those would become 3 requests (9 in all).
  const mock = MockLLM.start(
    [],
    () => anthropicError(529, "overloaded_error", { "retry-after-ms": "0" }),
  );
  const retries: number[] = [];
  try {
    const client = createClient(model("anthropic", mock.url, 2), (r) => retries.push(r.attempt), 1);
    await assert.rejects(client.chat(MESSAGES, []), (e: unknown) => {
      assert.ok(e instanceof LLMCallError);
      assert.equal(e.status, 529);
      assert.match(e.message, /gave up after 3 attempts/);
      return true;
    });
    assert.equal(mock.requests.length, 3, "retries multiplied: the SDK retried on its own");
    assert.equal(retries.length, 2);
  } finally {
    await mock.close();
  }
});

Deno.test("anthropic: 529 then a good answer: the call succeeds on the retry", async () => {
  const mock = MockLLM.start([
    anthropicError(529, "overloaded_error", { "retry-after-ms": "0" }),
    anthropicToolUses([], "hello"),
  ]);
  try {
    const client = createClient(model("anthropic", mock.url, 2), undefined, 1);
    const reply = await client.chat(MESSAGES, []);
    assert.equal(reply.content, "hello");
    assert.equal(mock.requests.length, 2);
  } finally {
    await mock.close();
  }
});
