/**
 * Chat Completions through the official `openai` SDK: OpenAI itself (tools in strict mode) and
 * every OpenAI-compatible endpoint (OpenRouter, DeepSeek, Qwen, Doubao, vLLM, Ollama's /v1).
 * The SDK is imported on first use only.
 */
import type { ResolvedModel } from "../config/resolve.ts";
import type { ToolDefinition } from "../tools/schema.ts";
import {
  emptyUsage,
  type LLMClient,
  type LLMMessage,
  type LLMResponse,
  parseToolArguments,
  type TextListener,
} from "./types.ts";
import type OpenAI from "openai";

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

/** Extra knobs a provider family needs on top of the model settings. */
export interface ChatOptions {
  defaultHeaders?: Record<string, string>;
  /** Builds the SDK client; Azure passes its own. */
  makeClient?: () => Promise<OpenAI>;
}

/** Models that refuse sampling parameters (reasoning models). */
function isReasoningModel(model: string): boolean {
  return /(^|\/)(o\d|gpt-5)/.test(model);
}

/** A Chat Completions client for `model`. */
export class OpenAIChatClient implements LLMClient {
  readonly provider: string;
  readonly model: string;
  #client?: Promise<OpenAI>;

  constructor(
    private readonly resolved: ResolvedModel,
    private readonly options: ChatOptions = {},
  ) {
    this.provider = resolved.provider.provider;
    this.model = resolved.settings.model;
  }

  #sdk(): Promise<OpenAI> {
    this.#client ??= this.options.makeClient?.() ?? (async () => {
      const { default: OpenAISdk } = await import("openai");
      return new OpenAISdk({
        apiKey: this.resolved.provider.api_key ?? "not-needed",
        baseURL: this.resolved.provider.base_url,
        maxRetries: 0,
        defaultHeaders: this.options.defaultHeaders,
      });
    })();
    return this.#client;
  }

  /** The request body for `messages` and `tools`, as sent on the wire. */
  request(messages: readonly LLMMessage[], tools: readonly ToolDefinition[]): ChatParams {
    const s = this.resolved.settings;
    const strictProvider = this.provider === "openai";
    const params: ChatParams = { model: s.model, messages: messages.map(toChatMessage) };
    if (tools.length > 0) {
      params.tools = tools.map((t) => ({
        type: "function",
        function: {
          name: t.name,
          description: t.description,
          parameters: t.parameters,
          ...(strictProvider ? { strict: t.strict ?? true } : {}),
        },
      }));
      if (strictProvider || s.parallel_tool_calls) {
        params.parallel_tool_calls = s.parallel_tool_calls;
      }
    }
    const reasoning = isReasoningModel(s.model);
    if (s.temperature !== undefined && !reasoning) params.temperature = s.temperature;
    if (s.top_p !== undefined && !reasoning) params.top_p = s.top_p;
    const limit = s.max_completion_tokens ?? s.max_tokens;
    if (limit !== undefined) {
      if (strictProvider || this.provider === "azure" || s.max_completion_tokens !== undefined) {
        params.max_completion_tokens = limit;
      } else {
        params.max_tokens = limit;
      }
    }
    if (s.stop_sequences) params.stop = s.stop_sequences;
    return params;
  }

  async chat(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
    signal?: AbortSignal,
    onText?: TextListener,
  ): Promise<LLMResponse> {
    const sdk = await this.#sdk();
    const completion = onText
      ? await streamCompletion(sdk, this.request(messages, tools), signal, onText)
      : await sdk.chat.completions.create(this.request(messages, tools), { signal });
    const choice = completion.choices?.[0];
    if (!choice) throw new Error(`${this.provider} returned no choices`);
    const usage = emptyUsage();
    usage.input_tokens = completion.usage?.prompt_tokens ?? 0;
    usage.output_tokens = completion.usage?.completion_tokens ?? 0;
    usage.cache_read_input_tokens = completion.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    usage.reasoning_tokens = completion.usage?.completion_tokens_details?.reasoning_tokens ?? 0;
    const calls = (choice.message.tool_calls ?? []).flatMap((c) =>
      c.type === "function" ? [parseToolArguments(c.id, c.function.name, c.function.arguments)] : []
    );
    return {
      content: choice.message.content ?? "",
      tool_calls: calls,
      usage,
      finish_reason: choice.finish_reason ?? null,
      model: completion.model ?? this.model,
    };
  }
}

function toChatMessage(m: LLMMessage): ChatMessage {
  switch (m.role) {
    case "system":
      return { role: m.role, content: m.content };
    case "user":
      if (!m.images?.length) return { role: m.role, content: m.content };
      return {
        role: "user",
        content: [
          { type: "text", text: m.content },
          ...m.images.map((i) => ({
            type: "image_url" as const,
            image_url: { url: `data:${i.mediaType};base64,${i.base64}` },
          })),
        ],
      };
    case "assistant":
      if (!m.tool_calls?.length) return { role: "assistant", content: m.content };
      return {
        role: "assistant",
        content: m.content || null,
        tool_calls: m.tool_calls.map((c) => ({
          id: c.call_id,
          type: "function",
          function: {
            name: c.name,
            arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
          },
        })),
      };
    case "tool":
      return { role: "tool", tool_call_id: m.call_id, content: m.content };
  }
}

// Streams a completion and puts the chunks back together into the shape `create` returns. Tool
// call arguments arrive as text pieces keyed by index and are joined here, not parsed: a model's
// broken JSON must reach parseToolArguments, not throw inside a stream helper.
async function streamCompletion(
  sdk: OpenAI,
  params: ChatParams,
  signal: AbortSignal | undefined,
  onText: TextListener,
): Promise<OpenAI.Chat.ChatCompletion> {
  const stream = await sdk.chat.completions.create(
    { ...params, stream: true, stream_options: { include_usage: true } },
    { signal },
  );
  let content = "";
  let finish: OpenAI.Chat.ChatCompletion.Choice["finish_reason"] | null = null;
  let model = params.model;
  let id = "";
  let usage: OpenAI.CompletionUsage | undefined;
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const chunk of stream) {
    id ||= chunk.id;
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) finish = choice.finish_reason;
    const delta = choice.delta;
    if (delta?.content) {
      content += delta.content;
      onText(delta.content);
    }
    for (const part of delta?.tool_calls ?? []) {
      const call = calls[part.index] ??= { id: "", name: "", arguments: "" };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
    }
  }
  return {
    id,
    object: "chat.completion",
    created: 0,
    model,
    usage,
    choices: [{
      index: 0,
      logprobs: null,
      finish_reason: finish ?? "stop",
      message: {
        role: "assistant",
        content,
        refusal: null,
        tool_calls: calls.filter(Boolean).map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments },
        })),
      },
    }],
  };
}
