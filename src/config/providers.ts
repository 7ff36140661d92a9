/** The provider names Deft knows; each has a client in src/llm. */
export const PROVIDERS = [
  "openai",
  "anthropic",
  "openai_compatible",
  "azure",
  "openrouter",
  "doubao",
  "google",
  "ollama",
] as const;

/** One of `PROVIDERS`. */
export type ProviderName = typeof PROVIDERS[number];

/** True when `name` is a known provider. */
export function isProvider(name: string): name is ProviderName {
  return (PROVIDERS as readonly string[]).includes(name);
}
