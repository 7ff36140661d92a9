/**
 * A collector for tests: an OTLP/HTTP JSON receiver on 127.0.0.1 that keeps every body Deno's
 * exporter posts, word for word, and reads the spans out of them. The telemetry tests check what
 * a real collector would be sent.
 */

/** An OTLP attribute value as sent: exactly one of these keys. */
export interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: OtlpValue[] };
}

/** A span as posted (attributes still OTLP's list of key and value), with its sender's name. */
export interface OtlpSpan {
  /** The `service.name` of the resource it came with ("" when none). */
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: OtlpValue }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
  events?: unknown[];
}

/** OTLP's status code for an error. */
export const STATUS_ERROR = 2;

export interface OtlpReceiver {
  /** Every body posted, in order, with the path it was posted to. */
  posts: { path: string; text: string }[];
  /** Where the exporter is to post (OTEL_EXPORTER_OTLP_ENDPOINT). */
  url: string;
  /** The environment that turns Deno's exporter on and points it here, console logs off. */
  env: Record<string, string>;
  /** The spans of every body posted so far (bodies that are not JSON hold none). */
  spans(): OtlpSpan[];
  close(): Promise<void>;
}

/** Starts a receiver; `close()` it when done. */
export function otlpReceiver(): OtlpReceiver {
  const posts: { path: string; text: string }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    posts.push({ path: new URL(req.url).pathname, text: await req.text() });
    return Response.json({});
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  return {
    posts,
    url,
    env: {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_DENO_CONSOLE: "ignore",
    },
    spans: () => posts.flatMap(({ text }) => spansOf(text)),
    close: () => server.shutdown(),
  };
}

/** The spans of one posted body, each with its resource's service name. */
function spansOf(text: string): OtlpSpan[] {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  // deno-lint-ignore no-explicit-any
  return (body?.resourceSpans ?? []).flatMap((rs: any) => {
    // deno-lint-ignore no-explicit-any
    const service = (rs.resource?.attributes ?? []).find((a: any) => a.key === "service.name")
      ?.value?.stringValue ?? "";
    // deno-lint-ignore no-explicit-any
    return (rs.scopeSpans ?? []).flatMap((ss: any) => ss.spans ?? []).map((s: OtlpSpan) => ({
      ...s,
      service,
    }));
  });
}

/** An attribute value as a plain JavaScript value (64-bit integers as numbers). */
export function plainValue(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return v.arrayValue.values.map(plainValue);
  return undefined;
}
