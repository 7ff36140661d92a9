/**
 * The config's `budget` key: hard caps on a session's spend (src/agent/budget.ts enforces them).
 * A repository's own config file may only lower a cap the user set, never raise or remove one,
 * trusted or not: a cloned project must not be able to spend more of the user's money.
 */
import { z } from "zod";

/** `budget: { max_cost_usd, max_tokens, max_wall_time }`; each unset: no cap. */
export const budgetSchema = z.strictObject({
  /** US dollars, by the model's price (`prices`, src/llm/prices.ts). */
  max_cost_usd: z.number().positive().optional(),
  /** Tokens in and out, summed over the model's responses. */
  max_tokens: z.number().int().positive().optional(),
  /** Seconds the agent works (each turn from start to end, summed). */
  max_wall_time: z.number().positive().optional(),
});

/** The caps as the config gives them. */
export type BudgetConfig = z.output<typeof budgetSchema>;

const KEYS = ["max_cost_usd", "max_tokens", "max_wall_time"] as const;

/** Each cap the lower of the user's and the repository's; a cap only one of them sets stands. */
export function lowerBudget(
  user: BudgetConfig | undefined,
  repository: BudgetConfig | undefined,
): BudgetConfig | undefined {
  if (!user && !repository) return undefined;
  const caps: BudgetConfig = {};
  for (const key of KEYS) {
    const values = [user?.[key], repository?.[key]].filter((v): v is number => v !== undefined);
    if (values.length > 0) caps[key] = Math.min(...values);
  }
  return caps;
}
