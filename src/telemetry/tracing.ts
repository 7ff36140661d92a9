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
 *
 * A session's spans all carry `gen_ai.conversation.id` (the trajectory's `session_id`): the turn
 * span is started with it (`conversation`), its children inherit it, and the in-process spans
 * around it (`deft.run`) take it too. Each turn that starts a trace of its own (interactive, ACP)
 * also links to the session's first turn.
 */
import { readEnv } from "../env.ts";

type Api = typeof import("@opentelemetry/api");
type Span = import("@opentelemetry/api").Span;
type Context = import("@opentelemetry/api").Context;
type ContextKey = ReturnType<Api["createContextKey"]>;
type SpanContext = import("@opentelemetry/api").SpanContext;

/** Attribute values a span takes. */
export type SpanValue = string | number | boolean | string[];
/** Attributes to set on a span; undefined ones are skipped. */
export type SpanAttributes = Record<string, SpanValue | undefined | null>;

let api: Api | undefined;
let loading: Promise<void> | undefined;
/** Where a context keeps the Deft spans open in it, outermost first. */
let openKey: ContextKey | undefined;

/** A Deft span still open, and the conversation it belongs to once known. */
interface OpenSpan {
  span: Span;
  conversation?: string;
}

/** The first turn of each conversation this process traced: later turns link to it. */
const firstTurns = new Map<string, SpanContext>();
/** How many conversations' first turns are remembered (an ACP server lives long). */
const MAX_CONVERSATIONS = 1000;

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
    if (typeof found?.trace?.getTracer === "function" && found.context) {
      openKey = found.createContextKey("deft.open_spans");
      api = found;
    }
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

/** The numeric attributes that are fractions; every other number Deft writes is a count or code. */
const DOUBLE_KEYS = new Set(["deft.cost_usd"]);

/**
 * `value` in the form Deno's exporter sends as OTLP `intValue`: it maps a JS number to
 * `doubleValue` whatever its value, and a BigInt to `intValue`. Token counts, exit statuses,
 * step numbers and error codes are integers in the OpenTelemetry conventions, and a backend
 * that stores `5.0` for them cannot group or compare them as such.
 */
function exported(key: string, value: SpanValue): SpanValue | bigint {
  if (typeof value === "number" && Number.isSafeInteger(value) && !DOUBLE_KEYS.has(key)) {
    return BigInt(value);
  }
  return value;
}

function setAll(span: Span, attributes: SpanAttributes): void {
  try {
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined || value === null) continue;
      const kept = allowed(key, value);
      // The API's types know no BigInt; Deno's span takes it (see `exported`).
      if (kept !== undefined) span.setAttribute(key, exported(key, kept) as SpanValue);
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
 * A `root` span (a run, a turn, a batch, a tool call of `deft serve`) loads the API first, and
 * without an active span takes an inbound `TRACEPARENT` as its parent.
 *
 * `conversation` (a session's id) goes on this span as `gen_ai.conversation.id`, on every span
 * started inside it, and on the Deft spans open around it that have none yet (the run holding the
 * session's turn). A root span with a conversation that starts a trace of its own links to the
 * first such span of that conversation in this process.
 */
export async function withSpan<T>(
  name: string,
  attributes: SpanAttributes,
  fn: (span: SpanHandle) => Promise<T>,
  options: { root?: boolean; conversation?: string | null } = {},
): Promise<T> {
  if (options.root) await initTracing();
  const a = api;
  if (!a || !openKey) return fn(NO_SPAN);
  let span: Span;
  let inside: Context;
  let conversation: string | undefined;
  try {
    const active = a.context.active();
    const open = (active.getValue(openKey) as OpenSpan[] | undefined) ?? [];
    const own = label(options.conversation);
    conversation = own ?? open.findLast((o) => o.conversation)?.conversation;
    const parent = (options.root && !a.trace.getSpan(active) ? inboundContext(a) : undefined) ??
      active;
    const parentTrace = a.trace.getSpanContext(parent)?.traceId;
    const first = own && options.root ? firstTurns.get(own) : undefined;
    const links = first && first.traceId !== parentTrace ? [{ context: first }] : [];
    span = a.trace.getTracer("deft").startSpan(name, { links }, parent);
    const mine: OpenSpan = { span, conversation };
    inside = a.trace.setSpan(parent, span).setValue(openKey, [...open, mine]);
    if (own) {
      for (const around of open) {
        if (around.conversation) continue;
        around.conversation = own;
        setAll(around.span, { "gen_ai.conversation.id": own });
      }
      if (options.root && !firstTurns.has(own)) rememberFirstTurn(own, span.spanContext());
    }
  } catch {
    // Tracing that misbehaves costs the span, never the run.
    return fn(NO_SPAN);
  }
  setAll(span, { ...attributes, "gen_ai.conversation.id": conversation });
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

function rememberFirstTurn(conversation: string, context: SpanContext): void {
  if (firstTurns.size >= MAX_CONVERSATIONS) {
    const oldest = firstTurns.keys().next().value;
    if (oldest !== undefined) firstTurns.delete(oldest);
  }
  firstTurns.set(conversation, context);
}

/**
 * Puts `conversation` (a session's id) on the innermost open Deft span, when it has none yet: a
 * batch's task span learns its run's session only when the run reports it.
 */
export function setConversation(conversation: string | undefined | null): void {
  const a = api;
  const id = label(conversation);
  if (!a || !openKey || !id) return;
  const innermost = (a.context.active().getValue(openKey) as OpenSpan[] | undefined)?.at(-1);
  if (!innermost || innermost.conversation) return;
  innermost.conversation = id;
  setAll(innermost.span, { "gen_ai.conversation.id": id });
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
