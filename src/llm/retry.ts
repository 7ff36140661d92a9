/**
 * Retries a provider call with exponential backoff and jitter, but only when retrying can help:
 * 408, 429, 5xx, timeouts and dropped connections. `Retry-After` is honoured. Other 4xx, host
 * names that do not resolve, refused connections and TLS failures fail at once
 * (src/llm/failure.ts decides). The SDKs' own retries are turned off so that this is the single
 * policy.
 */
import { classifyFailure, statusOf } from "./failure.ts";

/** Retry settings. */
export interface RetryOptions {
  maxRetries: number;
  /** First delay in ms (doubled each attempt, with jitter). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown; reason: string }) => void;
  signal?: AbortSignal;
  /** The base URL being called, named in messages when the error itself does not say. */
  endpoint?: string;
}

/** A provider call that failed for good. */
export class LLMCallError extends Error {
  constructor(message: string, readonly status?: number, options?: ErrorOptions) {
    super(message, options);
    this.name = "LLMCallError";
  }
}

/** The HTTP status an SDK error carries, if any. */
export function errorStatus(error: unknown): number | undefined {
  return statusOf(error);
}

/** True when a retry may succeed. */
export function isRetryable(error: unknown): boolean {
  return classifyFailure(error).retryable;
}

/** Milliseconds the server asked us to wait, from `Retry-After` or `retry-after-ms`. */
export function retryAfterMs(error: unknown): number | undefined {
  const headers = (error as { headers?: unknown })?.headers;
  const get = (name: string): string | null | undefined => {
    if (!headers) return undefined;
    if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
    return (headers as Record<string, string>)[name];
  };
  const ms = get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const value = get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Runs `call`, retrying as the policy allows; throws `LLMCallError` when it gives up. */
export async function withRetry<T>(call: () => Promise<T>, options: RetryOptions): Promise<T> {
  const base = options.baseDelayMs ?? 1000;
  const cap = options.maxDelayMs ?? 60_000;
  for (let attempt = 0;; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const status = errorStatus(error);
      const failure = classifyFailure(error, options.endpoint);
      if (!failure.retryable) {
        throw new LLMCallError(`${failure.message} (not retried)`, status, { cause: error });
      }
      if (attempt >= options.maxRetries) {
        throw new LLMCallError(
          `${failure.message} (gave up after ${attempt + 1} attempt${attempt ? "s" : ""})`,
          status,
          { cause: error },
        );
      }
      const backoff = Math.min(cap, base * 2 ** attempt) * (0.5 + Math.random() / 2);
      const delayMs = Math.min(cap, retryAfterMs(error) ?? backoff);
      options.onRetry?.({ attempt: attempt + 1, delayMs, error, reason: failure.message });
      await sleep(delayMs, options.signal);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
