/**
 * What a provider needs before its client can be built (a base URL, Azure's endpoint and API
 * version), checked without loading any client: the interactive start checks it before its
 * prompt is drawn (src/cli/interactive/preflight.ts), and client.ts before it builds a client,
 * with the same errors.
 */
import type { ResolvedModel } from "../config/resolve.ts";
import { ConfigError } from "../config/errors.ts";
import { readEnv } from "../env.ts";

/** Throws the ConfigError that says what `model`'s provider lacks; returns when it lacks nothing. */
export function checkProvider(model: ResolvedModel): void {
  const kind = model.provider.provider;
  switch (kind) {
    case "anthropic":
    case "openai":
    case "openrouter":
    case "google":
    case "ollama":
      return;
    case "openai_compatible":
      if (!model.provider.base_url) {
        throw new ConfigError(
          "Provider 'openai_compatible' needs the server's base URL: set " +
            "OPENAI_COMPATIBLE_BASE_URL, --model-base-url or model_providers.<name>.base_url " +
            "(e.g. http://localhost:8000/v1 for vLLM).",
        );
      }
      return;
    case "doubao":
      if (!model.provider.base_url) {
        throw new ConfigError(
          "Provider 'doubao' needs a base URL: set DOUBAO_BASE_URL, --model-base-url or " +
            "model_providers.<name>.base_url (your Volcano Engine Ark endpoint).",
        );
      }
      return;
    case "azure":
      if (!azureV1(model)) azureApiVersion(model);
      return;
    default:
      throw new ConfigError(
        `Provider '${kind}' is not supported by this Deft yet. Use anthropic, openai, ` +
          `openai_compatible, openrouter, doubao, azure, google or ollama.`,
      );
  }
}

/** Azure's resource endpoint, without trailing slashes; throws when none is set. */
export function azureEndpoint(model: ResolvedModel): string {
  const endpoint = model.provider.base_url?.trim().replace(/\/+$/, "");
  if (!endpoint) {
    throw new ConfigError(
      "Provider 'azure' needs your resource endpoint: set AZURE_BASE_URL, --model-base-url or " +
        "model_providers.<name>.base_url (e.g. https://<resource>.openai.azure.com).",
    );
  }
  return endpoint;
}

/** Whether the endpoint is Azure's version-less v1 API (`…/openai/v1`). */
export function azureV1(model: ResolvedModel): boolean {
  return /\/openai\/v1$/.test(azureEndpoint(model));
}

/** The API version Azure's versioned API needs; throws when none is set. */
export function azureApiVersion(model: ResolvedModel): string {
  // OPENAI_API_VERSION is the SDK's own variable; an empty variable counts as unset.
  const apiVersion = model.provider.api_version || readEnv("AZURE_API_VERSION") ||
    readEnv("OPENAI_API_VERSION");
  if (!apiVersion) {
    throw new ConfigError(
      "Provider 'azure' needs an API version: set model_providers.<name>.api_version or " +
        "AZURE_API_VERSION (e.g. 2024-10-21).",
    );
  }
  return apiVersion;
}
