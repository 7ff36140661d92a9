/**
 * Tracing's settings and the model's shell: the collector's address may pass, the exporter's
 * headers (where a hosted collector's API key goes) never do.
 */
import * as assert from "node:assert/strict";
import { shellEnvironment } from "../../src/policy/shell_env.ts";

Deno.test("the shell never sees the OTLP exporter's headers, which carry collector keys", () => {
  const env = shellEnvironment({}, {
    PATH: "/bin",
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: "https://api.honeycomb.io",
    OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=hc-live-0123456789",
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: "authorization=Basic abcdef0123456789",
    TRACEPARENT: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  });
  assert.deepEqual(env, {
    PATH: "/bin",
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: "https://api.honeycomb.io",
    TRACEPARENT: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  });
});
