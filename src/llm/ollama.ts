/**
 * Ollama's native chat API (`POST /api/chat`) through the official `ollama` SDK, imported on
 * first use. Every turn goes back to the model: assistant turns with their tool calls, and each
 * result as a `tool` message naming its tool (Trae Agent's client dropped the assistant turns).
 */
import { readEnv } from "../env.ts";
import type { ResolvedModel } from "../config/resolve.ts";
import type { ToolDefinition } from "../tools/schema.ts";
import {
  emptyUsage,
  type LLMClient,
  type LLMMessage,
  type LLMResponse,
  type LLMToolCall,
  parseToolArguments,
  type TextListener,
} from "./types.ts";
import type { ChatRequest, ChatResponse, Message, Ollama, Options, Tool } from "ollama";

type OllamaModule = typeof import("ollama");

// Where Ollama listens when neither the configuration nor OLLAMA_HOST says otherwise.
const DEFAULT_HOST = "http://127.0.0.1:11434";

/** An Ollama chat client for `model`. */
export class OllamaClient implements LLMClient {
  readonly provider = "ollama";
  readonly model: string;
  readonly #host: string;
  readonly #headers: Record<string, string>;
  #module?: Promise<OllamaModule>;

  constructor(private readonly resolved: ResolvedModel) {
    this.model = resolved.settings.model;
    this.#host = serverRoot(
      resolved.provider.base_url ?? readEnv("OLLAMA_HOST") ?? DEFAULT_HOST,
    );
    // A key is only needed behind an authenticating proxy or for ollama.com.
    const key = resolved.provider.api_key;
    this.#headers = key ? { Authorization: `Bearer ${key}` } : {};
  }

  /** The request body for `messages` and `tools`, as sent on the wire. */
  request(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
  ): ChatRequest & { stream: false } {
    const s = this.resolved.settings;
    const params: ChatRequest & { stream: false } = {
      model: s.model,
      messages: messages.map(toMessage),
      stream: false,
    };
    if (tools.length > 0) {
      params.tools = tools.map((t) => ({
        type: "function",
        function: {
          name: t.name,
          description: t.description,
          parameters: t.parameters as NonNullable<Tool["function"]["parameters"]>,
        },
      }));
    }
    const options: Partial<Options> = {};
    if (s.temperature !== undefined) options.temperature = s.temperature;
    if (s.top_p !== undefined) options.top_p = s.top_p;
    if (s.top_k !== undefined) options.top_k = s.top_k;
    const limit = s.max_tokens ?? s.max_completion_tokens;
    if (limit !== undefined) options.num_predict = limit;
    if (s.stop_sequences?.length) options.stop = s.stop_sequences;
    // Ollama's default context is a few thousand tokens and it silently drops the start of a
    // longer prompt (the system prompt first); the configured window asks for the real size.
    if (s.context_window !== undefined) options.num_ctx = s.context_window;
    if (Object.keys(options).length > 0) params.options = options;
    return params;
  }

  async chat(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
    signal?: AbortSignal,
    onText?: TextListener,
  ): Promise<LLMResponse> {
    this.#module ??= import("ollama");
    const { Ollama } = await this.#module;
    // The SDK passes no abort signal on non-streamed requests; its `fetch` hook is the way in.
    const client = new Ollama({
      host: this.#host,
      headers: this.#headers,
      fetch: (input, init) => fetchJsonErrors(input, { ...init, signal }),
    });
    let reply: ChatResponse;
    try {
      reply = onText
        ? await gather(client, { ...this.request(messages, tools), stream: true }, onText)
        : await client.chat(this.request(messages, tools));
    } catch (e) {
      throw withStatus(e);
    }
    const tool_calls: LLMToolCall[] = (reply.message?.tool_calls ?? []).map((c) => {
      // Ollama gives tool calls no ids; the agent needs one to pair each call with its result.
      const call_id = `call_${crypto.randomUUID()}`;
      const args: unknown = c.function.arguments;
      return typeof args === "string"
        ? parseToolArguments(call_id, c.function.name, args)
        : { call_id, name: c.function.name, arguments: args ?? {} };
    });
    const usage = emptyUsage();
    usage.input_tokens = reply.prompt_eval_count ?? 0;
    usage.output_tokens = reply.eval_count ?? 0;
    return {
      content: reply.message?.content ?? "",
      tool_calls,
      usage,
      finish_reason: reply.done_reason ?? null,
      model: reply.model ?? this.model,
    };
  }
}

function toMessage(m: LLMMessage): Message {
  switch (m.role) {
    case "system":
      return { role: m.role, content: m.content };
    case "user":
      if (m.images?.length) {
        throw new Error(
          "provider 'ollama' does not take image input in Deft: the image was not sent and no " +
            "model call was made; use an OpenAI, Anthropic or Google model for images.",
        );
      }
      return { role: m.role, content: m.content };
    case "assistant": {
      if (!m.tool_calls?.length) return { role: "assistant", content: m.content };
      return {
        role: "assistant",
        content: m.content,
        tool_calls: m.tool_calls.map((c) => ({
          function: {
            name: c.name,
            arguments: typeof c.arguments === "object" && c.arguments !== null
              ? c.arguments as Record<string, unknown>
              : {},
          },
        })),
      };
    }
    case "tool":
      return { role: "tool", content: m.content, tool_name: m.name };
  }
}

// The server root the SDK expects. Ollama's OpenAI-compatible URL (`…/v1`) and the API prefix
// (`…/api`) are common in configurations; the SDK appends `/api/chat` itself.
function serverRoot(host: string): string {
  return host.trim().replace(/\/+$/, "").replace(/\/(v1|api)$/, "");
}

// Fetch that turns a non-JSON error body into `{"error": text}`. The SDK reads JSON errors
// quietly but prints to stdout while reading any other kind, which would corrupt `--json`.
async function fetchJsonErrors(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.ok || response.headers.get("content-type")?.includes("application/json")) {
    return response;
  }
  const text = (await response.text()).trim();
  return Response.json({ error: text || response.statusText || `HTTP ${response.status}` }, {
    status: response.status,
    statusText: response.statusText,
  });
}

// The SDK's `ResponseError` names the status `status_code`; retry.ts reads `status`.
function withStatus(error: unknown): unknown {
  const status = (error as { status_code?: unknown })?.status_code;
  if (!(error instanceof Error) || typeof status !== "number") return error;
  return Object.assign(new Error(`Ollama error ${status}: ${error.message}`, { cause: error }), {
    status,
  });
}

// Streams a chat and puts it back together: the text pieces in order, every tool call of every
// chunk, and the counts and reason of the final (`done`) chunk.
async function gather(
  client: Ollama,
  request: ChatRequest & { stream: true },
  onText: TextListener,
): Promise<ChatResponse> {
  let content = "";
  const toolCalls: NonNullable<Message["tool_calls"]> = [];
  let last: ChatResponse | undefined;
  for await (const chunk of await client.chat(request)) {
    last = chunk;
    const piece = chunk.message?.content ?? "";
    if (piece) {
      content += piece;
      onText(piece);
    }
    toolCalls.push(...(chunk.message?.tool_calls ?? []));
  }
  if (!last) throw new Error("Ollama's stream ended without an answer");
  return {
    ...last,
    message: { role: "assistant", content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
  };
}
