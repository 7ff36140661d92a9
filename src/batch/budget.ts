/**
 * A batch-wide budget (`deft batch --max-cost-usd/--max-tokens/--max-wall-time`): one ledger file,
 * `budget.jsonl` in the batch's output folder (agent/budget_ledger.ts), made when the batch
 * first starts (or is submitted to Slurm). Every task's `deft run` gets `--budget-ledger` and
 * charges it after each model response and checks it before each request, so the batch stops at
 * its cap however many processes or Slurm nodes run its tasks. The wall-time cap counts from the
 * batch's first start (queue time included).
 */
import { join } from "node:path";
import { type BudgetCaps, type BudgetFlags, capsFromFlags, hasCaps } from "../agent/budget.ts";
import { LedgerError, openLedger } from "../agent/budget_ledger.ts";
import type { LoadedConfig } from "../config/load.ts";
import { resolveRunConfig } from "../config/resolve.ts";
import { costOf } from "../llm/prices.ts";
import { readEnv } from "../env.ts";
import { UsageError } from "../errors.ts";

/** The ledger's file name in the batch's output folder. */
export const LEDGER_FILE = "budget.jsonl";

/** The batch's caps as flags for a child `deft batch --index` (array tasks make the same ledger). */
export function budgetFlags(flags: BudgetFlags): string[] {
  const caps = capsFromFlags(flags);
  const args: string[] = [];
  if (caps.max_cost_usd !== undefined) args.push("--max-cost-usd", String(caps.max_cost_usd));
  if (caps.max_tokens !== undefined) args.push("--max-tokens", String(caps.max_tokens));
  if (caps.max_wall_time !== undefined) args.push("--max-wall-time", String(caps.max_wall_time));
  return args;
}

/**
 * The ledger of the batch in `out` when it has caps (made now if it is new), else undefined.
 * Refused with a UsageError: a cost cap on a model whose price is unknown, and a ledger whose
 * caps differ from the ones given (remove it to start the budget afresh).
 */
export async function batchLedger(
  out: string,
  flags: BudgetFlags & { provider?: string; model?: string; modelBaseUrl?: string },
  loaded: LoadedConfig,
): Promise<string | undefined> {
  const caps = capsFromFlags(flags);
  if (!hasCaps(caps)) return undefined;
  if (caps.max_cost_usd !== undefined) refuseUnpriced(flags, loaded);
  const path = join(out, LEDGER_FILE);
  let state;
  try {
    state = await openLedger(path, caps);
  } catch (e) {
    if (e instanceof LedgerError) throw new UsageError(e.message);
    throw e;
  }
  if (!sameCaps(state.caps, caps)) {
    throw new UsageError(
      `the batch in ${out} already has a budget (${JSON.stringify(state.caps)}, in ` +
        `${path}), not the one given (${JSON.stringify(caps)}). Give the same caps, or remove ` +
        `${path} to start the batch's budget afresh (its spend so far is then forgotten).`,
    );
  }
  return path;
}

function sameCaps(a: BudgetCaps, b: BudgetCaps): boolean {
  return a.max_cost_usd === b.max_cost_usd && a.max_tokens === b.max_tokens &&
    a.max_wall_time === b.max_wall_time;
}

function refuseUnpriced(
  flags: { provider?: string; model?: string; modelBaseUrl?: string },
  loaded: LoadedConfig,
): void {
  let provider: string;
  let model: string;
  try {
    const config = resolveRunConfig(loaded, flags, readEnv, false);
    provider = config.model.provider.provider;
    model = config.model.settings.model;
  } catch {
    return; // each task's run reports the configuration's problem itself
  }
  const zero = {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    reasoning_tokens: 0,
  };
  if (costOf(zero, provider, model, loaded.config.prices) !== null) return;
  throw new UsageError(
    `--max-cost-usd is set, but the price of model '${model}' is unknown, so the batch's ` +
      `spend cannot be counted. Give its price in the config (prices: { ${model}: { input: ` +
      `USD, output: USD } }, per million tokens), or cap tokens instead (--max-tokens).`,
  );
}
