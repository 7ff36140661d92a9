/**
 * Builds the chat client for a resolved model: the provider family's client, wrapped in the retry
 * policy. Provider SDKs load only when the first request is made.
 */
import { readEnv } from "../env.ts";
import type { ResolvedModel } from "../config/resolve.ts";
import { checkProvider } from "./provider_check.ts";
import type { ToolDefinition } from "../tools/schema.ts";
import { AnthropicClient } from "./anthropic.ts";
import { azureClient } from "./azure.ts";
import { GoogleClient } from "./google.ts";
import { OllamaClient } from "./ollama.ts";
import { OpenAIChatClient } from "./openai_chat.ts";
import { type RetryOptions, withRetry } from "./retry.ts";
import { traceModelCall } from "../telemetry/genai.ts";
import { costOf } from "./prices.ts";
import type { LLMClient, LLMMessage, LLMResponse, TextListener } from "./types.ts";

const OPENROUTER_URL = "https://openrouter.ai/api/v1";

/** Wraps a client so every call follows the retry policy. */
export class RetryingClient implements LLMClient {
  constructor(
    private readonly inner: LLMClient,
    private readonly options: Omit<RetryOptions, "signal">,
  ) {}

  get provider(): string {
    return this.inner.provider;
  }

  get model(): string {
    return this.inner.model;
  }

  chat(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
    signal?: AbortSignal,
    onText?: TextListener,
  ): Promise<LLMResponse> {
    return traceModelCall(
      this.provider,
      this.model,
      messages,
      () =>
        withRetry(() => this.inner.chat(messages, tools, signal, onText), {
          ...this.options,
          signal,
        }),
      (r) => costOf(r.usage, this.provider, this.model),
    );
  }
}

/** The provider client for `model`, without retries. */
export function providerClient(model: ResolvedModel): LLMClient {
  checkProvider(model);
  const kind = model.provider.provider;
  switch (kind) {
    case "anthropic":
      return new AnthropicClient(model);
    case "openai":
    case "openai_compatible":
    case "doubao":
      return new OpenAIChatClient(model);
    case "openrouter": {
      const headers: Record<string, string> = {};
      const site = readEnv("OPENROUTER_SITE_URL");
      const name = readEnv("OPENROUTER_SITE_NAME");
      if (site) headers["HTTP-Referer"] = site;
      if (name) headers["X-Title"] = name;
      const withUrl = {
        ...model,
        provider: { ...model.provider, base_url: model.provider.base_url ?? OPENROUTER_URL },
      };
      return new OpenAIChatClient(withUrl, { defaultHeaders: headers });
    }
    case "azure":
      return azureClient(model);
    case "google":
      return new GoogleClient(model);
    case "ollama":
      return new OllamaClient(model);
    default:
      // checkProvider refused it first, with what to use instead.
      throw new Error(`no client for provider '${kind}'`);
  }
}

/** The client a run uses: the provider's client behind the retry policy. */
export function createClient(
  model: ResolvedModel,
  onRetry?: RetryOptions["onRetry"],
  baseDelayMs?: number,
): LLMClient {
  return new RetryingClient(providerClient(model), {
    maxRetries: model.settings.max_retries,
    onRetry,
    baseDelayMs,
    endpoint: endpointOf(model),
  });
}

const DEFAULT_ENDPOINTS: Record<string, string> = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
  openrouter: OPENROUTER_URL,
  google: "https://generativelanguage.googleapis.com",
  ollama: "http://127.0.0.1:11434",
};

/** The URL a model's requests go to, for error messages. */
export function endpointOf(model: ResolvedModel): string | undefined {
  const kind = model.provider.provider;
  const fromEnv = kind === "ollama" ? readEnv("OLLAMA_HOST") : undefined;
  return model.provider.base_url ?? fromEnv ?? DEFAULT_ENDPOINTS[kind];
}
