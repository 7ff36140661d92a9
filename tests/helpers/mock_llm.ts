/**
 * A scripted LLM server on 127.0.0.1 speaking OpenAI Chat Completions and Anthropic Messages, so
 * the real SDKs talk HTTP to it. Each request takes the next scripted reply; every request is kept
 * for assertions. An unscripted request gets a 500 that names the problem.
 */

/** One scripted HTTP answer. */
export interface MockReply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait this long before answering (for timeouts and interruption tests). */
  delayMs?: number;
  /** A streamed body: these pieces in order (server-sent events), `chunkDelayMs` apart. */
  stream?: string[];
  chunkDelayMs?: number;
}

/** A request the server received. */
export interface MockRequest {
  path: string;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** The mock server. */
export class MockLLM {
  readonly requests: MockRequest[] = [];
  readonly #queue: MockReply[];
  readonly #server: Deno.HttpServer<Deno.NetAddr>;

  private constructor(
    replies: MockReply[],
    private readonly fallback?: (req: MockRequest) => MockReply,
  ) {
    this.#queue = [...replies];
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => this.#handle(req),
    );
  }

  /** Starts a server that will answer with `replies`, in order, then with `fallback` if given. */
  static start(replies: MockReply[] = [], fallback?: (req: MockRequest) => MockReply): MockLLM {
    return new MockLLM(replies, fallback);
  }

  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** Adds replies to the end of the script. */
  push(...replies: MockReply[]): void {
    this.#queue.push(...replies);
  }

  /** Stops the server. */
  async close(): Promise<void> {
    await this.#server.shutdown();
  }

  async #handle(req: Request): Promise<Response> {
    const text = await req.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch { /* keep the text */ }
    this.requests.push({ path: new URL(req.url).pathname, headers: req.headers, body });
    const reply = this.#queue.shift() ?? this.fallback?.(this.requests[this.requests.length - 1]);
    if (!reply) {
      return Response.json({ error: { message: "mock LLM: no scripted reply left" } }, {
        status: 500,
      });
    }
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.stream) return streamed(reply.stream, reply.chunkDelayMs ?? 0, reply.headers);
    // A client that asked for a stream (Deft streams when a live console shows the text) gets the
    // streamed form of a plain scripted reply, as a real server would send it.
    // deno-lint-ignore no-explicit-any
    const wanted = (body as any)?.stream === true && (reply.status ?? 200) === 200;
    // deno-lint-ignore no-explicit-any
    const shape = reply.body as any;
    if (wanted && Array.isArray(shape?.choices)) {
      const s = chatStream(reply);
      return streamed(s.stream!, 0, s.headers);
    }
    if (wanted && shape?.type === "message") {
      const s = anthropicStream(reply);
      return streamed(s.stream!, 0, s.headers);
    }
    return Response.json(reply.body ?? {}, { status: reply.status ?? 200, headers: reply.headers });
  }
}

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${++counter}`;

/** A Chat Completions reply calling `calls` ([name, args] pairs; args may be raw text). */
export function chatToolCalls(calls: [string, unknown][], content = ""): MockReply {
  return {
    body: {
      id: nextId("chatcmpl"),
      object: "chat.completion",
      created: 0,
      model: "mock-model",
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content,
          tool_calls: calls.map(([name, args]) => ({
            id: nextId("call"),
            type: "function",
            function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
          })),
        },
        finish_reason: "tool_calls",
      }],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        prompt_tokens_details: { cached_tokens: 10 },
        completion_tokens_details: { reasoning_tokens: 5 },
      },
    },
  };
}

/** A Chat Completions reply with text only. */
export function chatText(content: string): MockReply {
  return {
    body: {
      id: nextId("chatcmpl"),
      object: "chat.completion",
      created: 0,
      model: "mock-model",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
    },
  };
}

/** An Anthropic Messages reply using `calls` ([name, input] pairs). */
export function anthropicToolUses(calls: [string, unknown][], text = ""): MockReply {
  return {
    body: {
      id: nextId("msg"),
      type: "message",
      role: "assistant",
      model: "mock-claude",
      content: [
        ...(text ? [{ type: "text", text }] : []),
        ...calls.map(([name, input]) => ({ type: "tool_use", id: nextId("toolu"), name, input })),
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 200,
        output_tokens: 30,
        cache_creation_input_tokens: 7,
        cache_read_input_tokens: 11,
      },
    },
  };
}

/** An HTTP error reply in the OpenAI error shape. */
export function httpError(status: number, headers: Record<string, string> = {}): MockReply {
  return {
    status,
    headers,
    body: { error: { message: `mock error ${status}`, type: "mock", code: status } },
  };
}

/** A Gemini `generateContent` reply calling `calls` ([name, args] pairs). Like most Gemini models
 * it gives the calls no ids unless `options.ids` names them; `options.thoughtSignature` signs the
 * first call, as thinking models do. Usage reports cached and thinking tokens. */
export function geminiFunctionCalls(
  calls: [string, unknown][],
  text = "",
  options: { ids?: string[]; thoughtSignature?: string } = {},
): MockReply {
  const parts: unknown[] = text ? [{ text }] : [];
  calls.forEach(([name, args], i) => {
    parts.push({
      functionCall: { name, args, ...(options.ids ? { id: options.ids[i] } : {}) },
      ...(i === 0 && options.thoughtSignature
        ? { thoughtSignature: options.thoughtSignature }
        : {}),
    });
  });
  return {
    body: {
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
      usageMetadata: {
        promptTokenCount: 100,
        candidatesTokenCount: 20,
        cachedContentTokenCount: 10,
        thoughtsTokenCount: 5,
        totalTokenCount: 125,
      },
      modelVersion: "mock-gemini",
      responseId: nextId("gemini"),
    },
  };
}

/** A Gemini `generateContent` reply with text only. */
export function geminiText(text: string): MockReply {
  return {
    body: {
      candidates: [{
        content: { role: "model", parts: [{ text }] },
        finishReason: "STOP",
        index: 0,
      }],
      usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 10, totalTokenCount: 60 },
      modelVersion: "mock-gemini",
      responseId: nextId("gemini"),
    },
  };
}

const GOOGLE_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

/** An HTTP error in Google's shape; `retryDelay` (e.g. "2s") adds the `RetryInfo` a quota
 * error carries. */
export function geminiError(status: number, retryDelay?: string): MockReply {
  return {
    status,
    body: {
      error: {
        code: status,
        message: `mock error ${status}`,
        status: GOOGLE_STATUS[status] ?? "UNKNOWN",
        ...(retryDelay
          ? { details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay }] }
          : {}),
      },
    },
  };
}

/** An Ollama `/api/chat` reply calling `calls` ([name, args] pairs); Ollama gives calls no ids. */
export function ollamaToolCalls(calls: [string, unknown][], content = ""): MockReply {
  return ollamaReply(
    {
      role: "assistant",
      content,
      tool_calls: calls.map(([name, args]) => ({ function: { name, arguments: args } })),
    },
    100,
    20,
  );
}

/** An Ollama `/api/chat` reply with text only. */
export function ollamaText(content: string): MockReply {
  return ollamaReply({ role: "assistant", content }, 50, 10);
}

function ollamaReply(message: unknown, promptTokens: number, outputTokens: number): MockReply {
  return {
    body: {
      model: "mock-llama",
      created_at: "2026-01-01T00:00:00Z",
      message,
      done: true,
      done_reason: "stop",
      total_duration: 1_000_000,
      load_duration: 1000,
      prompt_eval_count: promptTokens,
      prompt_eval_duration: 1000,
      eval_count: outputTokens,
      eval_duration: 1000,
    },
  };
}

/** An HTTP error in Ollama's shape (`{"error": "..."}`). */
export function ollamaError(status: number): MockReply {
  return { status, body: { error: `mock error ${status}` } };
}

function streamed(pieces: string[], delayMs: number, headers: Record<string, string> = {}) {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const piece of pieces) {
        controller.enqueue(encoder.encode(piece));
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      }
      controller.close();
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers },
  });
}

/** Splits `text` into pieces of about `size` characters, as a model streams it. */
function pieces(text: string, size = 6): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * The streamed form of a Chat Completions reply made by `chatToolCalls` or `chatText`: content
 * in small deltas, tool calls by index with their arguments in pieces, then a usage chunk.
 */
export function chatStream(reply: MockReply, chunkDelayMs = 0): MockReply {
  // deno-lint-ignore no-explicit-any
  const body = reply.body as any;
  const message = body.choices[0].message;
  const base = { id: body.id, object: "chat.completion.chunk", created: 0, model: body.model };
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${
      JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })
    }\n\n`;
  const out = [chunk({ role: "assistant", content: "" })];
  for (const piece of pieces(message.content ?? "")) out.push(chunk({ content: piece }));
  (message.tool_calls ?? []).forEach((
    call: { id: string; function: { name: string; arguments: string } },
    index: number,
  ) => {
    out.push(chunk({
      tool_calls: [{
        index,
        id: call.id,
        type: "function",
        function: { name: call.function.name, arguments: "" },
      }],
    }));
    for (const piece of pieces(call.function.arguments, 10)) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  out.push(chunk({}, body.choices[0].finish_reason));
  out.push(`data: ${JSON.stringify({ ...base, choices: [], usage: body.usage })}\n\n`);
  out.push("data: [DONE]\n\n");
  return { stream: out, chunkDelayMs };
}

/** The streamed form of an Anthropic reply made by `anthropicToolUses`. */
export function anthropicStream(reply: MockReply, chunkDelayMs = 0): MockReply {
  // deno-lint-ignore no-explicit-any
  const body = reply.body as any;
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const out = [event("message_start", {
    message: {
      ...body,
      content: [],
      stop_reason: null,
      usage: { ...body.usage, output_tokens: 0 },
    },
  })];
  // deno-lint-ignore no-explicit-any
  body.content.forEach((block: any, index: number) => {
    if (block.type === "text") {
      out.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }));
      for (const piece of pieces(block.text)) {
        out.push(
          event("content_block_delta", { index, delta: { type: "text_delta", text: piece } }),
        );
      }
    } else {
      out.push(event("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      }));
      for (const piece of pieces(JSON.stringify(block.input), 10)) {
        out.push(event("content_block_delta", {
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        }));
      }
    }
    out.push(event("content_block_stop", { index }));
  });
  out.push(event("message_delta", {
    delta: { stop_reason: body.stop_reason, stop_sequence: null },
    usage: { output_tokens: body.usage.output_tokens },
  }));
  out.push(event("message_stop", {}));
  return { stream: out, chunkDelayMs };
}

/** The streamed form (server-sent events) of a Gemini reply made by `geminiFunctionCalls`. */
export function geminiStream(reply: MockReply, chunkDelayMs = 0): MockReply {
  // deno-lint-ignore no-explicit-any
  const body = reply.body as any;
  const candidate = body.candidates[0];
  const chunk = (parts: unknown[], last: boolean) =>
    `data: ${
      JSON.stringify({
        candidates: [{
          content: { role: "model", parts },
          index: 0,
          ...(last ? { finishReason: candidate.finishReason } : {}),
        }],
        ...(last ? { usageMetadata: body.usageMetadata } : {}),
        modelVersion: body.modelVersion,
        responseId: body.responseId,
      })
    }\r\n\r\n`;
  const out: string[] = [];
  // deno-lint-ignore no-explicit-any
  const parts: any[] = candidate.content.parts;
  const calls = parts.filter((p) => p.functionCall);
  for (const part of parts.filter((p) => p.text)) {
    for (const piece of pieces(part.text)) out.push(chunk([{ text: piece }], false));
  }
  out.push(chunk(calls, true));
  return { stream: out, chunkDelayMs };
}

/** The streamed form (NDJSON) of an Ollama reply made by `ollamaToolCalls`. */
export function ollamaStream(reply: MockReply, chunkDelayMs = 0): MockReply {
  // deno-lint-ignore no-explicit-any
  const body = reply.body as any;
  const base = { model: body.model, created_at: body.created_at };
  const out: string[] = [];
  for (const piece of pieces(body.message.content ?? "")) {
    out.push(
      JSON.stringify({ ...base, message: { role: "assistant", content: piece }, done: false }) +
        "\n",
    );
  }
  if (body.message.tool_calls) {
    out.push(
      JSON.stringify({
        ...base,
        message: { role: "assistant", content: "", tool_calls: body.message.tool_calls },
        done: false,
      }) + "\n",
    );
  }
  out.push(JSON.stringify({ ...body, message: { role: "assistant", content: "" } }) + "\n");
  return { stream: out, chunkDelayMs, headers: { "content-type": "application/x-ndjson" } };
}
