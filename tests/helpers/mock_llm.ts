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
