/**
 * Azure OpenAI: Chat Completions through the `openai` SDK's `AzureOpenAI` client, where the model
 * name is the deployment and every request carries the `api-version`. A base URL ending in
 * `/openai/v1` is Azure's version-less v1 API, which the plain OpenAI client speaks.
 */
import type { ResolvedModel } from "../config/resolve.ts";
import { azureApiVersion, azureEndpoint, azureV1 } from "./provider_check.ts";
import type { ToolDefinition } from "../tools/schema.ts";
import { OpenAIChatClient } from "./openai_chat.ts";
import type { LLMMessage } from "./types.ts";

// Deployments of models that take `max_completion_tokens` and refuse `max_tokens`.
const REASONING_DEPLOYMENT = /(^|\/)(o\d|gpt-5)/;

/**
 * The Azure OpenAI client for `model` (`model.settings.model` is the deployment name). Throws a
 * `ConfigError` that says what to set when the endpoint or the API version is missing.
 */
export function azureClient(model: ResolvedModel): OpenAIChatClient {
  const endpoint = azureEndpoint(model);
  if (azureV1(model)) {
    return new AzureChatClient({ ...model, provider: { ...model.provider, base_url: endpoint } });
  }
  const apiVersion = azureApiVersion(model);
  // The SDK appends `/openai` to an `endpoint`; a URL that already has it is the base URL.
  // Passing `baseURL` always also keeps OPENAI_BASE_URL in the environment from colliding with
  // `endpoint`, which the SDK refuses.
  const baseURL = /\/openai(\/deployments\/[^/]+)?$/.test(endpoint)
    ? endpoint
    : `${endpoint}/openai`;
  return new AzureChatClient(model, {
    makeClient: async () => {
      const { AzureOpenAI } = await import("openai");
      return new AzureOpenAI({
        apiKey: model.provider.api_key,
        apiVersion,
        baseURL,
        deployment: model.settings.model,
        maxRetries: 0,
      });
    },
  });
}

// Chat Completions with Azure's token limit rule: `max_completion_tokens` when the model
// settings name it or the deployment is a reasoning model, else `max_tokens`, which every API
// version and every other model accepts. A reasoning model deployed under another name needs
// `max_completion_tokens` in its model settings.
class AzureChatClient extends OpenAIChatClient {
  readonly #explicit: boolean;
  readonly #reasoning: boolean;

  constructor(
    resolved: ResolvedModel,
    options?: ConstructorParameters<typeof OpenAIChatClient>[1],
  ) {
    super(resolved, options);
    this.#explicit = resolved.settings.max_completion_tokens !== undefined;
    this.#reasoning = REASONING_DEPLOYMENT.test(resolved.settings.model);
  }

  override request(messages: readonly LLMMessage[], tools: readonly ToolDefinition[]) {
    const params = super.request(messages, tools);
    if (params.max_completion_tokens != null && !this.#explicit && !this.#reasoning) {
      params.max_tokens = params.max_completion_tokens;
      delete params.max_completion_tokens;
    }
    return params;
  }
}
