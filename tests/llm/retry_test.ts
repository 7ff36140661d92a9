import assert from "node:assert/strict";
import { isRetryable, LLMCallError, retryAfterMs, withRetry } from "../../src/llm/retry.ts";

function httpError(status: number, headers: Record<string, string> = {}) {
  return Object.assign(new Error(`status ${status}`), { status, headers: new Headers(headers) });
}

Deno.test("retryable: 429, 5xx, timeouts and connection errors; not other 4xx", () => {
  for (const status of [429, 500, 502, 503, 529, 408]) assert.ok(isRetryable(httpError(status)));
  for (const status of [400, 401, 403, 404, 422]) assert.ok(!isRetryable(httpError(status)));
  assert.ok(isRetryable(new Error("Connection error.")));
  assert.ok(
    isRetryable(
      Object.assign(new Error("Request timed out."), { name: "APIConnectionTimeoutError" }),
    ),
  );
  assert.ok(!isRetryable(Object.assign(new Error("aborted"), { name: "AbortError" })));
});

Deno.test("Retry-After in seconds, milliseconds or as a date", () => {
  assert.equal(retryAfterMs(httpError(429, { "retry-after": "2" })), 2000);
  assert.equal(retryAfterMs(httpError(429, { "retry-after-ms": "150" })), 150);
  const date = new Date(Date.now() + 3000).toUTCString();
  const ms = retryAfterMs(httpError(429, { "retry-after": date }))!;
  assert.ok(ms > 1000 && ms <= 3000, String(ms));
  assert.equal(retryAfterMs(httpError(429)), undefined);
});

Deno.test("retries until success, honouring Retry-After", async () => {
  let calls = 0;
  const delays: number[] = [];
  const result = await withRetry(() => {
    calls++;
    if (calls === 1) return Promise.reject(httpError(429, { "retry-after-ms": "30" }));
    if (calls === 2) return Promise.reject(httpError(503));
    return Promise.resolve("ok");
  }, { maxRetries: 5, baseDelayMs: 1, onRetry: (i) => delays.push(i.delayMs) });
  assert.equal(result, "ok");
  assert.equal(calls, 3);
  assert.equal(delays[0], 30);
  assert.ok(delays[1] >= 1 && delays[1] <= 2, String(delays[1]));
});

Deno.test("gives up after max_retries with a clear error; 4xx fails at once", async () => {
  let calls = 0;
  await assert.rejects(
    withRetry(() => {
      calls++;
      return Promise.reject(httpError(500));
    }, { maxRetries: 2, baseDelayMs: 1 }),
    (e: unknown) =>
      e instanceof LLMCallError && /gave up after 3 attempts/.test(e.message) && e.status === 500,
  );
  assert.equal(calls, 3);
  calls = 0;
  await assert.rejects(
    withRetry(() => {
      calls++;
      return Promise.reject(httpError(401));
    }, { maxRetries: 5, baseDelayMs: 1 }),
    /401.*not retried/,
  );
  assert.equal(calls, 1);
});

Deno.test("backoff grows exponentially with jitter and stays under the cap", async () => {
  const delays: number[] = [];
  await assert.rejects(withRetry(() => Promise.reject(httpError(502)), {
    maxRetries: 6,
    baseDelayMs: 1,
    maxDelayMs: 20,
    onRetry: (i) => delays.push(i.delayMs),
  }));
  assert.equal(delays.length, 6);
  delays.forEach((d, i) => assert.ok(d >= Math.min(20, 2 ** i) / 2 && d <= 20, `${i}: ${d}`));
});

Deno.test("a server's Retry-After is capped: one header cannot stall a run for a day", async () => {
  const day = httpError(429, { "retry-after": "86400" });
  // The wait is read from onRetry and cut short there, so a missing cap fails instead of hanging.
  async function firstDelay(maxDelayMs?: number): Promise<number> {
    const abort = new AbortController();
    const delays: number[] = [];
    await assert.rejects(withRetry(() => Promise.reject(day), {
      maxRetries: 3,
      maxDelayMs,
      signal: abort.signal,
      onRetry: (i) => {
        delays.push(i.delayMs);
        abort.abort(new Error("stop"));
      },
    }));
    assert.equal(delays.length, 1);
    return delays[0];
  }
  assert.equal(await firstDelay(20), 20);
  assert.equal(await firstDelay(), 60_000, "without a configured cap, a minute at most");
});
