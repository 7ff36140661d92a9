import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { anthropicToolUses, chatToolCalls, httpError, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { classifyFailure } from "../../../src/llm/failure.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A localhost port nobody listens on. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function deftRun(provider: string, baseUrl: string | undefined, extra: string[] = []) {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const started = Date.now();
  const r = await runDeft([
    "run",
    "fix it",
    "-w",
    repo,
    "-p",
    provider,
    "-m",
    "mock-model",
    ...(baseUrl ? ["--model-base-url", baseUrl] : []),
    "-k",
    "sk-test",
    ...extra,
  ], { cwd: home, env: { HOME: home, DEFT_RETRY_BASE_MS: "5" } });
  return { ...r, seconds: (Date.now() - started) / 1000 };
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

Deno.test("a refused port fails at once, naming the URL, and the error is printed once", async () => {
  const url = `http://127.0.0.1:${closedPort()}/v1`;
  const r = await deftRun("openai_compatible", url);
  assert.equal(r.code, 1, r.stderr);
  assert.ok(r.seconds < 5 + 3, `took ${r.seconds} s`); // +3 s for Deno's own start-up
  assert.match(r.stderr, /connection was refused/);
  assert.match(r.stderr, new RegExp(url.replace(/[.]/g, "\\.")));
  assert.doesNotMatch(r.stderr, /retry 1/);
  assert.equal(occurrences(r.stderr, "connection was refused"), 1, r.stderr);
});

Deno.test("an unresolvable host fails at once with a DNS message naming the URL", async () => {
  const url = "http://deft-no-such-host.invalid/v1";
  const r = await deftRun("openai_compatible", url, ["--json"]);
  assert.equal(r.code, 1, r.stderr);
  assert.ok(r.seconds < 5 + 3, `took ${r.seconds} s`);
  const summary = JSON.parse(r.stdout);
  assert.match(summary.final_result, /deft-no-such-host\.invalid/);
  assert.match(summary.final_result, /does not resolve \(DNS\)/);
  assert.doesNotMatch(r.stderr, /retry 1/);
});

Deno.test("401 through the Anthropic SDK fails at once with the provider's message", async () => {
  const mock = MockLLM.start([{
    status: 401,
    body: {
      type: "error",
      error: { type: "authentication_error", message: "invalid x-api-key" },
    },
  }, anthropicToolUses([["task_done", {}]])]);
  try {
    const r = await deftRun("anthropic", mock.url, ["--json"]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(mock.requests.length, 1);
    const result = JSON.parse(r.stdout).final_result;
    assert.match(result, /invalid x-api-key/);
    assert.match(result, /HTTP 401/);
    assert.match(result, /not retried/);
  } finally {
    await mock.close();
  }
});

Deno.test("503 then 200 is retried and the run succeeds", async () => {
  const mock = MockLLM.start([httpError(503), chatToolCalls([["task_done", {}]], "done")]);
  try {
    const r = await deftRun("openai_compatible", `${mock.url}/v1`, ["--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(mock.requests.length, 2);
    assert.match(r.stderr, /HTTP 503.*retry 1/);
  } finally {
    await mock.close();
  }
});

Deno.test("409 and 404 are not retried; 408 is", async () => {
  const mock = MockLLM.start([httpError(409), chatToolCalls([["task_done", {}]])]);
  try {
    const r = await deftRun("openai_compatible", `${mock.url}/v1`, ["--json"]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(mock.requests.length, 1);
  } finally {
    await mock.close();
  }
  const status = (n: number) => Object.assign(new Error(`${n}`), { status: n });
  assert.equal(classifyFailure(status(404)).retryable, false);
  assert.equal(classifyFailure(status(408)).retryable, true);
});

Deno.test("openai_compatible without a base URL is a configuration error (exit 2)", async () => {
  const r = await deftRun("openai_compatible", undefined);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /openai_compatible' needs the server's base URL/);
});

Deno.test("classifyFailure reads the cause chain of SDK connection errors", () => {
  const wrap = (inner: string) =>
    new Error("Connection error.", {
      cause: new TypeError("fetch failed", { cause: new Error(inner) }),
    });
  const tls = classifyFailure(
    wrap(
      "error sending request for url (https://h:1/v1/chat): client error (Connect): " +
        "received corrupt message of type InvalidContentType",
    ),
  );
  assert.equal(tls.kind, "tls");
  assert.match(tls.message, /https:\/\/h:1\/v1\/chat/);
  assert.equal(classifyFailure(wrap("connection reset by peer")).retryable, true);
  assert.equal(classifyFailure(new Error("Request timed out.")).kind, "timeout");
});
