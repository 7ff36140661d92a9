/**
 * The model-call span, after the OpenTelemetry GenAI semantic conventions: `chat {model}` with
 * the provider, the requested and answering model, token usage, finish reason and cost. The
 * shapes are structural so this layer needs nothing from src/llm.
 */
import { contentCaptured, withSpan } from "./tracing.ts";

/** What the span reads from a model's answer. */
export interface TracedResponse {
  content: string;
  usage: { input_tokens: number; output_tokens: number };
  finish_reason: string | null;
  model: string;
}

/**
 * Runs `call` (one model call with its retries) inside a `chat` span. `messages` and the answer's
 * text go on the span only when the user opted in to message content.
 */
export function traceModelCall<R extends TracedResponse>(
  provider: string,
  model: string,
  messages: readonly unknown[],
  call: () => Promise<R>,
  cost: (response: R) => number | null,
): Promise<R> {
  return withSpan(`chat ${model}`, {
    "gen_ai.operation.name": "chat",
    "gen_ai.system": provider,
    "gen_ai.provider.name": provider,
    "gen_ai.request.model": model,
  }, async (span) => {
    if (contentCaptured()) span.set({ "gen_ai.input.messages": JSON.stringify(messages) });
    const response = await call();
    span.set({
      "gen_ai.response.model": response.model,
      "gen_ai.usage.input_tokens": response.usage.input_tokens,
      "gen_ai.usage.output_tokens": response.usage.output_tokens,
      "gen_ai.response.finish_reasons": response.finish_reason
        ? [response.finish_reason]
        : undefined,
      "deft.cost_usd": cost(response) ?? undefined,
    });
    if (contentCaptured()) span.set({ "gen_ai.output.messages": response.content });
    return response;
  });
}
