/**
 * What a run cost, where the model's price is known. Prices are US dollars per million tokens;
 * the table below holds list prices of common models and the `prices` config key overrides or
 * extends it (`prices: { my-model: { input: 1.0, output: 4.0 } }`). A model is matched by its
 * exact name, then by the longest table key it starts with (dated snapshots, `-latest`).
 */
import type { LLMUsage } from "./types.ts";

/** USD per million tokens. `cache_read` defaults to `input`, `cache_write` to `input`. */
export interface Price {
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}

/** List prices (USD per million tokens); override them with the `prices` config key. */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = {
  "claude-opus-4": { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 },
  "claude-sonnet-4": { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  "claude-haiku-4": { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
  "claude-3-5-haiku": { input: 0.8, output: 4, cache_read: 0.08, cache_write: 1 },
  "gpt-4.1": { input: 2, output: 8, cache_read: 0.5 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cache_read: 0.1 },
  "gpt-4o": { input: 2.5, output: 10, cache_read: 1.25 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cache_read: 0.075 },
  "gpt-5": { input: 1.25, output: 10, cache_read: 0.125 },
  "gpt-5-mini": { input: 0.25, output: 2, cache_read: 0.025 },
  "o3": { input: 2, output: 8, cache_read: 0.5 },
  "o4-mini": { input: 1.1, output: 4.4, cache_read: 0.275 },
  "gemini-2.5-pro": { input: 1.25, output: 10, cache_read: 0.31 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5, cache_read: 0.075 },
};

/** The price of `model` in `table` (exact name, else the longest key it starts with). */
export function priceOf(
  model: string,
  overrides: Readonly<Record<string, Price>> = {},
): Price | undefined {
  const name = model.replace(/^.*\//, ""); // openrouter-style "vendor/model"
  for (const table of [overrides, DEFAULT_PRICES]) {
    if (table[model]) return table[model];
    if (table[name]) return table[name];
  }
  for (const table of [overrides, DEFAULT_PRICES]) {
    const key = Object.keys(table).filter((k) => name.startsWith(k))
      .sort((a, b) => b.length - a.length)[0];
    if (key) return table[key];
  }
  return undefined;
}

/** The cost in USD of `usage` on `model` of `provider`, or null when its price is unknown. */
export function costOf(
  usage: LLMUsage,
  provider: string,
  model: string,
  overrides?: Readonly<Record<string, Price>>,
): number | null {
  const price = priceOf(model, overrides);
  if (!price) return null;
  // Anthropic counts cached tokens apart from input_tokens; the others count them inside it.
  const plainInput = provider === "anthropic"
    ? usage.input_tokens
    : Math.max(0, usage.input_tokens - usage.cache_read_input_tokens);
  const dollars = plainInput * price.input +
    usage.cache_read_input_tokens * (price.cache_read ?? price.input) +
    usage.cache_creation_input_tokens * (price.cache_write ?? price.input) +
    usage.output_tokens * price.output;
  return dollars / 1e6;
}
