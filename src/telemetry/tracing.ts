/**
 * OpenTelemetry traces through Deno's built-in exporter. Off unless Deno's own switch
 * `OTEL_DENO=true` is set when Deft starts (Deno reads it at process start; the exporter, its
 * endpoint and protocol are Deno's: `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`).
 * When it is off, `@opentelemetry/api` is never loaded and every helper here calls straight
 * through.
 *
 * Content (prompts, answers, tool output, error text, file text, argument values) goes on a span
 * only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, and that is kept here, where
 * every attribute and status is written: a text attribute is written only when it is a label
 * (identifier-shaped, as a model or tool name is) or one of `CONTENT_KEYS` with the opt-in on; a
 * failed span's status message is an error kind, with the error's text after it only with the
 * opt-in.
 */
import { readEnv } from "../env.ts";

type Api = typeof import("@opentelemetry/api");
type Span = import("@opentelemetry/api").Span;
type Context = import("@opentelemetry/api").Context;

/** Attribute values a span takes. */
export type SpanValue = string | number | boolean | string[];
/** Attributes to set on a span; undefined ones are skipped. */
export type SpanAttributes = Record<string, SpanValue | undefined | null>;

let api: Api | undefined;
let loading: Promise<void> | undefined;

/** Whether tracing is on: Deno's exporter was switched on as this process started. */
export function tracingEnabled(): boolean {
  return readEnv("OTEL_DENO")?.toLowerCase() === "true";
}

/** The attributes that carry content; written only with the content opt-in. */
const CONTENT_KEYS = new Set([
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.tool.call.result",
]);

/** Longest error text a status message carries with the content opt-in. */
const MAX_DETAIL = 1000;

const LABEL = /^[A-Za-z0-9_][A-Za-z0-9_.:\/@+-]{0,127}$/;

/**
 * `value` when it is a label (a name, an id, a kind: identifier-shaped, at most 128 characters,
 * no spaces), else undefined. Text that is not a label never goes on a span without the opt-in.
 */
export function label(value: string | undefined | null): string | undefined {
  return typeof value === "string" && LABEL.test(value) ? value : undefined;
}

/**
 * The kind of a thrown error for a span's status: its class name (`LLMCallError`,
 * `AbortError`), which the code chose, never its message, which the data may fill.
 */
export function errorKind(error: unknown): string {
  const name = error instanceof Error ? (error.constructor?.name || error.name) : undefined;
  return name && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name) ? name : "Error";
}

/** Whether prompt and answer text may go on spans (the user opted in). */
export function contentCaptured(): boolean {
  return api !== undefined &&
    readEnv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")?.toLowerCase() === "true";
}

/** Loads the OpenTelemetry API when tracing is on; a no-op (no import) when it is off. */
export function initTracing(): Promise<void> {
  if (!tracingEnabled()) return Promise.resolve();
  loading ??= import("@opentelemetry/api").then((m) => {
    // The one-file bundle hands the package over as a CommonJS default export.
    const found = (m.context ? m : (m as unknown as { default?: Api }).default) as Api | undefined;
    if (typeof found?.trace?.getTracer === "function" && found.context) api = found;
  }, () => {
    // A tracing library that fails to load must never stop a run.
  });
  return loading;
}

/** An inbound W3C `traceparent` (`00-<trace>-<span>-<flags>`) as the parent context. */
function inboundContext(a: Api): Context | undefined {
  const header = readEnv("TRACEPARENT")?.trim().toLowerCase();
  const m = header?.match(/^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/);
  if (!m || m[1] === "ff" || /^0+$/.test(m[2]) || /^0+$/.test(m[3])) return undefined;
  return a.trace.setSpanContext(a.ROOT_CONTEXT, {
    traceId: m[2],
    spanId: m[3],
    traceFlags: parseInt(m[4], 16) & 1,
    isRemote: true,
  });
}

/** `value` as it may go on a span: content only with the opt-in, other text only as labels. */
function allowed(key: string, value: SpanValue): SpanValue | undefined {
  if (CONTENT_KEYS.has(key)) return contentCaptured() ? value : undefined;
  if (typeof value === "string") return label(value);
  if (Array.isArray(value)) {
    const labels = value.map(label);
    return labels.every((v) => v !== undefined) ? labels as string[] : undefined;
  }
  return value;
}

function setAll(span: Span, attributes: SpanAttributes): void {
  try {
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined || value === null) continue;
      const kept = allowed(key, value);
      if (kept !== undefined) span.setAttribute(key, kept);
    }
  } catch {
    // An attribute the exporter refuses is lost; the run goes on.
  }
}

/** What a traced function may add to its span once it knows more. */
export interface SpanHandle {
  set(attributes: SpanAttributes): void;
  /**
   * Marks the span failed with the error kind `kind` (a label from a fixed vocabulary); `detail`,
   * the error's text, follows it in the status message only with the content opt-in. The
   * function still decides what it returns.
   */
  fail(kind: string, detail?: string): void;
}

const NO_SPAN: SpanHandle = { set() {}, fail() {} };

/**
 * Runs `fn` inside a span named `name` (active for everything `fn` starts), ending it when `fn`
 * settles; a throw marks it failed and passes on. With tracing off or not loaded yet, just `fn`.
 * A `root` span (a run, a turn, a batch) loads the API first, and without an active span takes an
 * inbound `TRACEPARENT` as its parent.
 */
export async function withSpan<T>(
  name: string,
  attributes: SpanAttributes,
  fn: (span: SpanHandle) => Promise<T>,
  options: { root?: boolean } = {},
): Promise<T> {
  if (options.root) await initTracing();
  const a = api;
  if (!a) return fn(NO_SPAN);
  let span: Span;
  let inside: Context;
  try {
    const active = a.context.active();
    const parent = (options.root && !a.trace.getSpan(active) ? inboundContext(a) : undefined) ??
      active;
    span = a.trace.getTracer("deft").startSpan(name, {}, parent);
    inside = a.trace.setSpan(parent, span);
  } catch {
    // Tracing that misbehaves costs the span, never the run.
    return fn(NO_SPAN);
  }
  setAll(span, attributes);
  const handle: SpanHandle = {
    set: (more) => setAll(span, more),
    fail: (kind, detail) => {
      const shown = label(kind) ?? "error";
      const message = detail && contentCaptured()
        ? `${shown}: ${detail.slice(0, MAX_DETAIL)}`
        : shown;
      try {
        span.setStatus({ code: a.SpanStatusCode.ERROR, message });
      } catch {
        // As with attributes: the status is lost, the run goes on.
      }
    },
  };
  try {
    return await a.context.with(inside, () => fn(handle));
  } catch (e) {
    const kind = errorKind(e);
    setAll(span, { "error.type": kind });
    handle.fail(kind, e instanceof Error ? e.message : String(e));
    throw e;
  } finally {
    span.end();
  }
}

/**
 * The `TRACEPARENT` variable naming the active span, for a child process; empty when tracing is
 * off or no span is active.
 */
export function traceparentEnv(): Record<string, string> {
  const a = api;
  if (!a) return {};
  const context = a.trace.getSpanContext(a.context.active());
  if (!context || !a.isSpanContextValid(context)) return {};
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
  return { TRACEPARENT: `00-${context.traceId}-${context.spanId}-${flags}` };
}
