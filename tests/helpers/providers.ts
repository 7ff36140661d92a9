/**
 * What the provider client tests share (tests/e2e/llm/azure_test.ts, google_test.ts,
 * ollama_test.ts): a resolved model for one provider, the conversation and the tool they send,
 * and the mock LLM server closed after each test.
 */
import type { ResolvedModel, ResolvedProvider } from "../../src/config/resolve.ts";
import type { ModelConfig } from "../../src/config/schema.ts";
import type { ToolDefinition } from "../../src/tools/schema.ts";
import { MockLLM, type MockReply } from "./mock_llm.ts";

/** The system prompt of the round-trip conversations. */
export const SYSTEM = "You are a careful engineer.";

/** The user's task of the round-trip conversations. */
export const TASK = "List the files, then stop.";

/** A bash-like tool with one required string parameter, as the round trips offer it. */
export const BASH_TOOL: ToolDefinition = {
  name: "bash",
  description: "Run a command.",
  parameters: {
    type: "object",
    properties: { command: { type: "string", description: "The command." } },
    required: ["command"],
  },
};

/**
 * A model named `model` on `provider`, ready for a client: no parallel tool calls and no retries
 * unless `settings` say otherwise.
 *
 * ```ts
 * const m = providerModel({ provider: "ollama", keyVariable: "OLLAMA_API_KEY" }, "llama3.1");
 * ```
 */
export function providerModel(
  provider: ResolvedProvider,
  model: string,
  settings: Partial<ModelConfig> = {},
): ResolvedModel {
  return {
    name: model,
    provider,
    settings: {
      model_provider: provider.provider,
      model,
      parallel_tool_calls: false,
      max_retries: 0,
      ...settings,
    },
  };
}

/** Runs `body` against a mock LLM server answering `replies`, closed afterwards whatever happens. */
export async function withMock(
  replies: MockReply[],
  body: (mock: MockLLM) => Promise<void>,
): Promise<void> {
  const mock = MockLLM.start(replies);
  try {
    await body(mock);
  } finally {
    await mock.close();
  }
}
