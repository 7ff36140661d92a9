/**
 * An in-process `LLMClient` that answers from a script, so the agent loop runs in a unit test
 * with no process, no HTTP and no SDK. Each `chat` takes the next scripted answer; every call's
 * messages and tool names are kept for assertions.
 */
import {
  emptyUsage,
  type LLMClient,
  type LLMMessage,
  type LLMResponse,
  type LLMToolCall,
  type TextListener,
} from "../../src/llm/types.ts";
import type { ToolDefinition } from "../../src/tools/schema.ts";

/** One scripted answer: a response, an error to throw, or a function of the conversation. */
export type FakeAnswer =
  | LLMResponse
  | Error
  | ((messages: readonly LLMMessage[]) => LLMResponse | Error);

/** What the model was asked. */
export interface FakeCall {
  /** A copy of the conversation at the time of the call. */
  messages: LLMMessage[];
  /** The names of the tools it was offered. */
  tools: string[];
}

/** The scripted client. */
export class FakeLLM implements LLMClient {
  readonly provider = "fake";
  readonly model = "fake-model";
  readonly calls: FakeCall[] = [];
  readonly #script: FakeAnswer[];

  constructor(script: FakeAnswer[]) {
    this.#script = [...script];
  }

  chat(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
    _signal?: AbortSignal,
    onText?: TextListener,
  ): Promise<LLMResponse> {
    this.calls.push({ messages: structuredClone([...messages]), tools: tools.map((t) => t.name) });
    const next = this.#script.shift();
    if (next === undefined) {
      return Promise.reject(new Error("fake LLM: no scripted answer left"));
    }
    const answer = typeof next === "function" ? next(messages) : next;
    if (answer instanceof Error) return Promise.reject(answer);
    if (answer.content) onText?.(answer.content);
    return Promise.resolve(answer);
  }
}

let counter = 0;

/** An answer calling `calls` ([name, arguments] pairs), with `content` as its text. */
export function callTools(calls: [string, unknown][], content = ""): LLMResponse {
  const toolCalls: LLMToolCall[] = calls.map(([name, args]) => ({
    call_id: `fake_${++counter}`,
    name,
    arguments: args,
  }));
  return {
    content,
    tool_calls: toolCalls,
    usage: { ...emptyUsage(), input_tokens: 10, output_tokens: 2 },
    finish_reason: "tool_calls",
    model: "fake-model",
  };
}

/** An answer with text only. */
export function answerText(content: string): LLMResponse {
  return {
    content,
    tool_calls: [],
    usage: { ...emptyUsage(), input_tokens: 10, output_tokens: 2 },
    finish_reason: "stop",
    model: "fake-model",
  };
}
