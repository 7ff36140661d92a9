/**
 * Anthropic's Messages API through the official `@anthropic-ai/sdk`, imported on first use. Tool
 * results travel as `tool_result` blocks with `is_error`; consecutive user-side blocks are merged
 * into one message, as the API requires.
 */
import type { ResolvedModel } from "../config/resolve.ts";
import type { ToolDefinition } from "../tools/schema.ts";
import {
  emptyUsage,
  type LLMClient,
  type LLMMessage,
  type LLMResponse,
  type TextListener,
} from "./types.ts";
import type Anthropic from "@anthropic-ai/sdk";

type MessageParam = Anthropic.MessageParam;
type Block = Anthropic.ContentBlockParam;
type CreateParams = Anthropic.MessageCreateParamsNonStreaming;

const DEFAULT_MAX_TOKENS = 4096;

/** A Messages API client for `model`. */
export class AnthropicClient implements LLMClient {
  readonly provider = "anthropic";
  readonly model: string;
  #client?: Promise<Anthropic>;

  constructor(private readonly resolved: ResolvedModel) {
    this.model = resolved.settings.model;
  }

  #sdk(): Promise<Anthropic> {
    this.#client ??= (async () => {
      const { default: AnthropicSdk } = await import("@anthropic-ai/sdk");
      return new AnthropicSdk({
        apiKey: this.resolved.provider.api_key,
        baseURL: this.resolved.provider.base_url,
        maxRetries: 0,
      });
    })();
    return this.#client;
  }

  /** The request body for `messages` and `tools`, as sent on the wire. */
  request(messages: readonly LLMMessage[], tools: readonly ToolDefinition[]): CreateParams {
    const s = this.resolved.settings;
    const system = messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
    const params: CreateParams = {
      model: s.model,
      max_tokens: s.max_tokens ?? s.max_completion_tokens ?? DEFAULT_MAX_TOKENS,
      messages: toMessages(messages),
    };
    if (system) params.system = system;
    if (tools.length > 0) {
      params.tools = tools.map((t) => ({
        name: t.name,
        description: t.description,
        input_schema: t.parameters as Anthropic.Tool.InputSchema,
      }));
      if (!s.parallel_tool_calls) {
        params.tool_choice = { type: "auto", disable_parallel_tool_use: true };
      }
    }
    // The SDK's types no longer list sampling parameters, but older models still take them.
    // Recent models refuse temperature and top_p together, so temperature wins.
    const sampling = params as CreateParams & Record<string, number>;
    if (s.temperature !== undefined) sampling.temperature = s.temperature;
    else if (s.top_p !== undefined) sampling.top_p = s.top_p;
    if (s.top_k) sampling.top_k = s.top_k;
    if (s.stop_sequences) params.stop_sequences = s.stop_sequences;
    return params;
  }

  async chat(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
    signal?: AbortSignal,
    onText?: TextListener,
  ): Promise<LLMResponse> {
    const sdk = await this.#sdk();
    let reply: Anthropic.Message;
    if (onText) {
      const stream = sdk.messages.stream(this.request(messages, tools), { signal });
      stream.on("text", (delta) => onText(delta));
      reply = await stream.finalMessage();
    } else {
      reply = await sdk.messages.create(this.request(messages, tools), { signal });
    }
    const usage = emptyUsage();
    usage.input_tokens = reply.usage?.input_tokens ?? 0;
    usage.output_tokens = reply.usage?.output_tokens ?? 0;
    usage.cache_creation_input_tokens = reply.usage?.cache_creation_input_tokens ?? 0;
    usage.cache_read_input_tokens = reply.usage?.cache_read_input_tokens ?? 0;
    let content = "";
    const tool_calls: LLMResponse["tool_calls"] = [];
    for (const block of reply.content ?? []) {
      if (block.type === "text") content += block.text;
      if (block.type === "tool_use") {
        tool_calls.push({ call_id: block.id, name: block.name, arguments: block.input });
      }
    }
    return {
      content,
      tool_calls,
      usage,
      finish_reason: reply.stop_reason ?? null,
      model: reply.model,
    };
  }
}

function toMessages(messages: readonly LLMMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  const push = (role: "user" | "assistant", blocks: Block[]) => {
    const last = out[out.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) {
      (last.content as Block[]).push(...blocks);
    } else {
      out.push({ role, content: blocks });
    }
  };
  for (const m of messages) {
    switch (m.role) {
      case "system":
        break;
      case "user":
        push("user", [
          { type: "text", text: m.content },
          ...(m.images ?? []).map((i): Block => ({
            type: "image",
            source: { type: "base64", media_type: i.mediaType, data: i.base64 },
          })),
        ]);
        break;
      case "assistant": {
        const blocks: Block[] = m.content ? [{ type: "text", text: m.content }] : [];
        for (const c of m.tool_calls ?? []) {
          const input = typeof c.arguments === "object" && c.arguments !== null ? c.arguments : {};
          blocks.push({ type: "tool_use", id: c.call_id, name: c.name, input });
        }
        push("assistant", blocks.length ? blocks : [{ type: "text", text: "(no content)" }]);
        break;
      }
      case "tool":
        push("user", [{
          type: "tool_result",
          tool_use_id: m.call_id,
          content: m.content,
          is_error: m.is_error,
        }]);
        break;
    }
  }
  return out;
}
