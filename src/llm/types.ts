/**
 * Provider-neutral conversation types. The agent owns the history in this form; each client
 * translates it to its provider's wire format and back.
 */
import type { ToolDefinition } from "../tools/schema.ts";

/** A tool call the model asked for. `arguments` is the parsed object, or the raw text when it
 * was not valid JSON (then `argumentsError` says why). */
export interface LLMToolCall {
  call_id: string;
  name: string;
  arguments: unknown;
  argumentsError?: string;
}

/** An image the user attached: its type (checked by its magic bytes) and its bytes in base64. */
export interface LLMImage {
  mediaType: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
  base64: string;
}

/** One message of the conversation. */
export type LLMMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string; images?: LLMImage[] }
  | { role: "assistant"; content: string; tool_calls?: LLMToolCall[] }
  | { role: "tool"; call_id: string; name: string; content: string; is_error: boolean };

/** Token counts of one response (zero where the provider does not report them). */
export interface LLMUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  reasoning_tokens: number;
}

/** The model's answer. */
export interface LLMResponse {
  content: string;
  tool_calls: LLMToolCall[];
  usage: LLMUsage;
  finish_reason: string | null;
  model: string;
}

/** A chat client for one model. */
export interface LLMClient {
  readonly provider: string;
  readonly model: string;
  /**
   * Asks the model. With `onText`, the client streams where its provider can and passes each
   * piece of the answer's text as it arrives; the response still holds the whole answer.
   */
  chat(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
    signal?: AbortSignal,
    onText?: TextListener,
  ): Promise<LLMResponse>;
}

/** Receives the model's text as it streams in. */
export type TextListener = (delta: string) => void;

/** Zero usage. */
export function emptyUsage(): LLMUsage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    reasoning_tokens: 0,
  };
}

/** Adds `b` into `a`. */
export function addUsage(a: LLMUsage, b: LLMUsage): void {
  for (const key of Object.keys(a) as (keyof LLMUsage)[]) a[key] += b[key] ?? 0;
}

/** Parses a model's JSON argument text into a tool call. */
export function parseToolArguments(
  call_id: string,
  name: string,
  text: string | undefined,
): LLMToolCall {
  const raw = text === undefined || text.trim() === "" ? "{}" : text;
  try {
    return { call_id, name, arguments: JSON.parse(raw) };
  } catch (e) {
    return { call_id, name, arguments: raw, argumentsError: (e as Error).message };
  }
}
