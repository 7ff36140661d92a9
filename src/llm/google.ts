/**
 * Gemini through the official `@google/genai` SDK (the Gemini Developer API), imported on first
 * use. The system prompt travels as `systemInstruction`, assistant turns as `model` contents with
 * their `functionCall` parts, and the results of one step as `functionResponse` parts of a single
 * `user` turn, so that Gemini sees as many responses as it made calls.
 */
import type { ResolvedModel } from "../config/resolve.ts";
import type { JsonSchema, ToolDefinition } from "../tools/schema.ts";
import {
  emptyUsage,
  type LLMClient,
  type LLMMessage,
  type LLMResponse,
  type LLMToolCall,
  type TextListener,
} from "./types.ts";
import type {
  Content,
  FunctionDeclaration,
  GenerateContentConfig,
  GenerateContentParameters,
  GenerateContentResponse,
  GoogleGenAI,
  Part,
} from "@google/genai/web";

// Prefix of the call ids Deft makes up when Gemini sends none (most models do not). Such an id
// only pairs a call with its result inside Deft: it is never sent back, because Gemini matches
// responses to calls by order and name and would not know an id it did not issue.
const MINTED_ID_PREFIX = "deft_gemini_";

/** A Gemini client for `model`. */
export class GoogleClient implements LLMClient {
  readonly provider = "google";
  readonly model: string;
  #client?: Promise<GoogleGenAI>;
  // Thought signatures by call id. Thinking models sign their function calls and refuse a
  // history whose calls come back unsigned; the neutral history has no place for them, so the
  // client keeps them for the calls it returned.
  readonly #signatures = new Map<string, string>();

  constructor(private readonly resolved: ResolvedModel) {
    this.model = resolved.settings.model;
  }

  #sdk(): Promise<GoogleGenAI> {
    this.#client ??= (async () => {
      // The web build: fetch only, none of the Node auth stack (google-auth-library pulls in
      // node:http, https, net, zlib and child_process), which Deft does not use for API keys.
      const { GoogleGenAI } = await import("@google/genai/web");
      const { api_key, base_url, api_version } = this.resolved.provider;
      const endpoint = base_url ? splitApiVersion(base_url) : undefined;
      // `vertexai: false` keeps GOOGLE_GENAI_USE_VERTEXAI in the environment from moving the
      // run to Vertex AI, which needs a project and Google Cloud credentials instead of a key.
      // No `retryOptions`: the SDK then makes one attempt and src/llm/retry.ts decides.
      return new GoogleGenAI({
        apiKey: api_key,
        vertexai: false,
        apiVersion: api_version ?? endpoint?.version,
        httpOptions: endpoint ? { baseUrl: endpoint.baseUrl } : undefined,
      });
    })();
    return this.#client;
  }

  /** The request for `messages` and `tools`, as handed to `models.generateContent`. */
  request(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
  ): GenerateContentParameters {
    const s = this.resolved.settings;
    const config: GenerateContentConfig = {};
    const system = messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
    if (system) config.systemInstruction = { parts: [{ text: system }] };
    if (tools.length > 0) config.tools = [{ functionDeclarations: tools.map(declaration) }];
    if (s.temperature !== undefined) config.temperature = s.temperature;
    if (s.top_p !== undefined) config.topP = s.top_p;
    if (s.top_k !== undefined) config.topK = s.top_k;
    const limit = s.max_tokens ?? s.max_completion_tokens;
    if (limit !== undefined) config.maxOutputTokens = limit;
    if (s.candidate_count !== undefined) config.candidateCount = s.candidate_count;
    if (s.stop_sequences?.length) config.stopSequences = s.stop_sequences;
    return { model: s.model, contents: this.#contents(messages), config };
  }

  async chat(
    messages: readonly LLMMessage[],
    tools: readonly ToolDefinition[],
    signal?: AbortSignal,
    onText?: TextListener,
  ): Promise<LLMResponse> {
    const sdk = await this.#sdk();
    const params = this.request(messages, tools);
    let reply: GenerateContentResponse;
    try {
      const request = { ...params, config: { ...params.config, abortSignal: signal } };
      reply = onText
        ? await gather(await sdk.models.generateContentStream(request), onText)
        : await sdk.models.generateContent(request);
    } catch (e) {
      throw readableError(e);
    }
    const candidate = reply.candidates?.[0];
    if (!candidate) {
      const feedback = reply.promptFeedback;
      throw new Error(
        feedback?.blockReason
          ? `Gemini refused the prompt (${feedback.blockReason}` +
            `${feedback.blockReasonMessage ? `: ${feedback.blockReasonMessage}` : ""})`
          : "Gemini returned no candidates",
      );
    }
    let content = "";
    const tool_calls: LLMToolCall[] = [];
    for (const part of candidate.content?.parts ?? []) {
      // Thought summaries are the model's notes to itself, not part of its answer.
      if (part.thought) continue;
      if (part.text) content += part.text;
      if (part.functionCall) {
        const call_id = part.functionCall.id || `${MINTED_ID_PREFIX}${crypto.randomUUID()}`;
        if (part.thoughtSignature) this.#signatures.set(call_id, part.thoughtSignature);
        tool_calls.push({
          call_id,
          name: part.functionCall.name ?? "",
          arguments: part.functionCall.args ?? {},
        });
      }
    }
    const meta = reply.usageMetadata;
    const usage = emptyUsage();
    usage.input_tokens = meta?.promptTokenCount ?? 0;
    usage.cache_read_input_tokens = meta?.cachedContentTokenCount ?? 0;
    usage.reasoning_tokens = meta?.thoughtsTokenCount ?? 0;
    // Gemini counts thinking apart from the answer; output includes it, as OpenAI's does, so
    // output tokens mean the same thing for every provider.
    usage.output_tokens = (meta?.candidatesTokenCount ?? 0) + usage.reasoning_tokens;
    return {
      content,
      tool_calls,
      usage,
      finish_reason: candidate.finishReason ?? null,
      model: reply.modelVersion ?? this.model,
    };
  }

  #contents(messages: readonly LLMMessage[]): Content[] {
    const out: Content[] = [];
    // Gemini wants user and model turns to alternate; consecutive parts of one side merge.
    const push = (role: "user" | "model", parts: Part[]) => {
      const last = out[out.length - 1];
      if (last?.role === role) last.parts!.push(...parts);
      else out.push({ role, parts });
    };
    for (const m of messages) {
      switch (m.role) {
        case "system":
          break;
        case "user":
          push("user", [
            { text: m.content },
            ...(m.images ?? []).map((i) => ({
              inlineData: { mimeType: i.mediaType, data: i.base64 },
            })),
          ]);
          break;
        case "assistant": {
          const parts: Part[] = m.content ? [{ text: m.content }] : [];
          for (const c of m.tool_calls ?? []) {
            const args = typeof c.arguments === "object" && c.arguments !== null
              ? c.arguments as Record<string, unknown>
              : {};
            const part: Part = { functionCall: { ...wireId(c.call_id), name: c.name, args } };
            const signature = this.#signatures.get(c.call_id);
            if (signature) part.thoughtSignature = signature;
            parts.push(part);
          }
          // A turn needs at least one part; an empty answer still has to keep its place.
          push("model", parts.length ? parts : [{ text: "(no content)" }]);
          break;
        }
        case "tool":
          push("user", [{
            functionResponse: {
              ...wireId(m.call_id),
              name: m.name,
              // The API reads `output` as the result and `error` as a failure.
              response: m.is_error ? { error: m.content } : { output: m.content },
            },
          }]);
          break;
      }
    }
    return out;
  }
}

function wireId(callId: string): { id?: string } {
  return callId.startsWith(MINTED_ID_PREFIX) ? {} : { id: callId };
}

// The declaration of one tool. Parameters go as `parametersJsonSchema`, which takes JSON Schema
// as written, rather than `parameters`, whose OpenAPI subset refuses what Deft's tools need:
// a property without a type (json_edit's `value` accepts any JSON), `additionalProperties`,
// and the `$ref`/`$defs`, `const` and `oneOf` that MCP servers' schemas use. Two things are still left out: the root
// `$schema` dialect marker, and the parameters of a tool that takes none, because Gemini
// rejects an object schema with no properties ("should be non-empty for OBJECT type").
function declaration(tool: ToolDefinition): FunctionDeclaration {
  const { $schema: _dialect, ...schema } = tool.parameters;
  const declared: FunctionDeclaration = { name: tool.name, description: tool.description };
  if (!takesNoArguments(schema)) declared.parametersJsonSchema = { type: "object", ...schema };
  return declared;
}

const EMPTY_OBJECT_KEYS = new Set(["type", "properties", "required", "description", "title"]);

function takesNoArguments(schema: JsonSchema): boolean {
  const properties = schema.properties as Record<string, unknown> | undefined;
  if (properties && Object.keys(properties).length > 0) return false;
  // Anything else (a `$ref`, a union, `additionalProperties` with a schema) describes arguments.
  return Object.entries(schema).every(([key, value]) =>
    EMPTY_OBJECT_KEYS.has(key) || (key === "additionalProperties" && value === false)
  );
}

// Splits a version segment off a base URL (`https://host/v1beta` → `https://host` + `v1beta`),
// because the SDK appends the version itself and would otherwise request `/v1beta/v1/...`.
function splitApiVersion(baseUrl: string): { baseUrl: string; version?: string } {
  const match = /^(.+?)\/(v\d+(?:(?:alpha|beta)\d*)?)\/?$/.exec(baseUrl);
  return match ? { baseUrl: match[1], version: match[2] } : { baseUrl };
}

// The SDK's `ApiError` carries the status, but its message is the raw JSON body. This keeps the
// status (retry.ts reads it), turns the body into a sentence, and passes Gemini's `RetryInfo`
// delay on as `retry-after-ms` so the retry waits as long as the quota asks.
function readableError(error: unknown): unknown {
  const status = (error as { status?: unknown })?.status;
  if (!(error instanceof Error) || error.name !== "ApiError" || typeof status !== "number") {
    return error;
  }
  let detail = error.message;
  const headers: Record<string, string> = {};
  try {
    const body = JSON.parse(error.message)?.error;
    if (body?.message) detail = body.status ? `${body.status}: ${body.message}` : body.message;
    const details: { "@type"?: string; retryDelay?: string }[] = body?.details ?? [];
    const delay = details.find((d) => d["@type"]?.endsWith("RetryInfo"))?.retryDelay;
    const seconds = Number.parseFloat(delay ?? "");
    if (Number.isFinite(seconds)) headers["retry-after-ms"] = String(Math.round(seconds * 1000));
  } catch {
    // Not JSON (a proxy's error page): the raw text is the best description there is.
  }
  return Object.assign(new Error(`Gemini API error ${status}: ${detail}`, { cause: error }), {
    status,
    headers,
  });
}

// Puts a streamed answer back together: the parts of every chunk in order (text shown as it
// arrives, thoughts not), with the finish reason, usage and model version of the last chunk
// that has them.
async function gather(
  stream: AsyncGenerator<GenerateContentResponse>,
  onText: TextListener,
): Promise<GenerateContentResponse> {
  const parts: Part[] = [];
  let last: GenerateContentResponse | undefined;
  let finishReason: NonNullable<GenerateContentResponse["candidates"]>[number]["finishReason"];
  let usage: GenerateContentResponse["usageMetadata"];
  let modelVersion: string | undefined;
  for await (const chunk of stream) {
    last = chunk;
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      parts.push(part);
      if (part.text && !part.thought) onText(part.text);
    }
    finishReason = candidate?.finishReason ?? finishReason;
    usage = chunk.usageMetadata ?? usage;
    modelVersion = chunk.modelVersion ?? modelVersion;
  }
  if (!last) throw new Error("Gemini's stream ended without an answer");
  return {
    candidates: last.candidates || parts.length
      ? [{ content: { role: "model", parts }, finishReason, index: 0 }]
      : undefined,
    promptFeedback: last.promptFeedback,
    usageMetadata: usage,
    modelVersion,
  } as GenerateContentResponse;
}
