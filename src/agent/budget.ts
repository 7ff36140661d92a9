/**
 * Hard budget caps for a session: dollars (`--max-cost-usd`), tokens (`--max-tokens`) and the
 * agent's working time (`--max-wall-time`), from the flags over the config's `budget`. The loop
 * asks `check()` before every model request and between tool calls; a cap reached ends the run
 * with exit code `BUDGET_EXIT_CODE` and says what was spent against which cap. A batch-wide cap
 * lives in a ledger file (./budget_ledger.ts) that every task of the batch charges and reads.
 *
 * Every request Deft makes on the user's key counts: the loop's own (checked and charged by the
 * loop), a child agent's (the parent's budget, handed to its loop), and the requests made beside
 * the loop — step summaries and `/compact` — through `meter(client)`, a client that asks the
 * budget before each request and charges it after.
 */
import type { LLMClient, LLMUsage } from "../llm/types.ts";
import { UsageError } from "../errors.ts";
import type { BudgetConfig } from "../config/budget.ts";
import { chargeLedger, LedgerError, type LedgerState, readLedger } from "./budget_ledger.ts";
import { costOf } from "../llm/prices.ts";
import type { RunConfig } from "../config/resolve.ts";

/** The exit code of a run (or session) that stopped at a budget cap. */
export const BUDGET_EXIT_CODE = 3;

/** The caps, as the config's `budget` spells them (src/config/budget.ts); unset: no cap. */
export type BudgetCaps = BudgetConfig;

/** What was spent so far. */
export interface BudgetSpent {
  cost_usd: number;
  tokens: number;
  /** Seconds. */
  wall_time: number;
}

/** The cap a run stopped at: which, its limit, and what was spent (run's or batch's). */
export interface BudgetStop {
  /** `ledger`: a batch's ledger could not be read or written, so its caps cannot be kept. */
  cap: keyof BudgetCaps | "ledger";
  limit: number;
  spent: BudgetSpent;
  /** `run`: this session's own cap; `batch`: the batch-wide one in the ledger. */
  scope: "run" | "batch";
  /** Why the ledger failed (cap `ledger`). */
  error?: string;
}

/** What the trajectory and `--json` record: the caps, the spend and the stop, if any. */
export interface BudgetRecord {
  caps: BudgetCaps;
  spent: BudgetSpent;
  batch?: { ledger: string; caps: BudgetCaps; spent: BudgetSpent };
  stopped?: BudgetStop;
}

const CAP_KEYS = ["max_cost_usd", "max_tokens", "max_wall_time"] as const;

/** The flags' caps: `--max-cost-usd`, `--max-tokens`, `--max-wall-time` (strings from commander). */
export interface BudgetFlags {
  maxCostUsd?: string | number;
  maxTokens?: string | number;
  maxWallTime?: string | number;
}

/** Reads the budget flags; a value that is not a positive number is a UsageError. */
export function capsFromFlags(flags: BudgetFlags): BudgetCaps {
  const caps: BudgetCaps = {};
  const read = (value: string | number | undefined, flag: string, integer: boolean) => {
    if (value === undefined) return undefined;
    const n = typeof value === "number" ? value : Number(String(value).trim());
    if (
      String(value).trim() === "" || !Number.isFinite(n) || n <= 0 ||
      (integer && !Number.isInteger(n))
    ) {
      throw new UsageError(
        `${flag} must be a positive ${integer ? "whole number" : "number"}, not '${value}'.`,
      );
    }
    return n;
  };
  const cost = read(flags.maxCostUsd, "--max-cost-usd", false);
  const tokens = read(flags.maxTokens, "--max-tokens", true);
  const wall = read(flags.maxWallTime, "--max-wall-time (seconds)", false);
  if (cost !== undefined) caps.max_cost_usd = cost;
  if (tokens !== undefined) caps.max_tokens = tokens;
  if (wall !== undefined) caps.max_wall_time = wall;
  return caps;
}

/** The caps in force: each flag wins over the config's value for the same cap. */
export function mergeCaps(flags: BudgetCaps, config: BudgetCaps | undefined): BudgetCaps {
  return { ...(config ?? {}), ...flags };
}

/** Whether `caps` sets any cap. */
export function hasCaps(caps: BudgetCaps | undefined): boolean {
  return caps !== undefined && CAP_KEYS.some((k) => caps[k] !== undefined);
}

/** What a budget needs besides its caps. */
export interface BudgetOptions {
  /**
   * The cost in USD of a response's usage on `model` of `provider` (the session's model when
   * not given); null when that model's price is unknown.
   */
  price: (usage: LLMUsage, provider?: string, model?: string) => number | null;
  /** The session's model, for the message when its price is unknown. */
  model: string;
  /** A batch's ledger file, and the task charging it. */
  ledger?: { path: string; by: string };
}

/** How long a check waits for the spend of requests already sent beside the loop. */
const IN_FLIGHT_WAIT_MS = 10_000;

/** A request refused because a cap is reached (thrown by a metered client's `chat`). */
export class BudgetStopError extends Error {
  override name = "BudgetStopError";
  constructor(readonly stop: BudgetStop) {
    super(budgetRefusal(stop));
  }
}

/**
 * A session's spend against its caps. `begin`/`end` bracket each turn (the wall clock runs only
 * while the agent works, not while a conversation waits for its user); `charge` adds a model
 * response; `check` says which cap, if any, is reached; `meter` wraps a client whose requests
 * are made beside the loop.
 */
export class Budget {
  readonly caps: BudgetCaps;
  readonly #options: BudgetOptions;
  #cost = 0;
  #tokens = 0;
  #workedMs = 0;
  #since: number | undefined;
  /** Loops working now: a child agent's runs inside its parent's turn. */
  #working = 0;
  /** Metered requests sent and not yet charged. */
  readonly #inFlight = new Set<Promise<unknown>>();
  #batch: LedgerState | undefined;
  stopped: BudgetStop | undefined;

  constructor(caps: BudgetCaps, options: BudgetOptions) {
    this.caps = caps;
    this.#options = options;
  }

  /**
   * Checks what can be checked before the first request: a cost cap needs the model's price
   * (refused with a UsageError when it is unknown), and a batch's ledger must be readable.
   */
  async start(): Promise<void> {
    if (this.#options.ledger) this.#batch = await readLedger(this.#options.ledger.path);
    this.#needPrice(undefined, this.#options.model);
  }

  /** Refuses (UsageError) a model whose spend a cost cap could not count. */
  #needPrice(provider: string | undefined, model: string): void {
    const wantsCost = this.caps.max_cost_usd !== undefined ||
      this.#batch?.caps.max_cost_usd !== undefined;
    if (wantsCost && this.#options.price(ZERO_USAGE, provider, model) === null) {
      throw new UsageError(
        `a cost cap (--max-cost-usd or budget.max_cost_usd) is set, but the price of model ` +
          `'${model}' is unknown, so its spend cannot be counted. Give its price ` +
          `in the config (prices: { ${model}: { input: USD, output: USD } }, per ` +
          `million tokens), or cap tokens instead (--max-tokens).`,
      );
    }
  }

  /**
   * `client`, its every request within this budget: refused with a `BudgetStopError` when a
   * cap is reached, charged at its model's price when it answers. For requests made beside the
   * loop (step summaries, `/compact`); checks wait for the spend of those still in flight. A
   * cost cap on a model whose price is unknown is refused here (UsageError).
   */
  meter(client: LLMClient): LLMClient {
    this.#needPrice(client.provider, client.model);
    const chat: LLMClient["chat"] = (messages, tools, signal, onText) => {
      const request = (async () => {
        // Not waiting for in-flight requests: this one is among them.
        const stop = await this.#reached();
        if (stop) throw new BudgetStopError(stop);
        const response = await client.chat(messages, tools, signal, onText);
        await this.charge(response.usage, client.provider, client.model);
        return response;
      })();
      // In flight from the call on, so a check made right after it waits for its spend.
      const settled = request.then(() => {}, () => {});
      this.#inFlight.add(settled);
      void settled.then(() => this.#inFlight.delete(settled));
      return request;
    };
    return { provider: client.provider, model: client.model, chat };
  }

  /** The agent starts working (a turn begins; a child agent's run within it counts once). */
  begin(): void {
    if (this.#working++ === 0) this.#since = Date.now();
  }

  /** The agent stops working (a turn ends). */
  end(): void {
    if (this.#working === 0 || --this.#working > 0 || this.#since === undefined) return;
    this.#workedMs += Date.now() - this.#since;
    this.#since = undefined;
  }

  /**
   * Adds one model response's usage at its model's price (the session's model when not given),
   * and charges the batch's ledger.
   */
  async charge(usage: LLMUsage, provider: string, model?: string): Promise<void> {
    const tokens = usageTokens(usage, provider);
    const cost =
      (model === undefined
        ? this.#options.price(usage)
        : this.#options.price(usage, provider, model)) ?? 0;
    this.#tokens += tokens;
    this.#cost += cost;
    const ledger = this.#options.ledger;
    if (!ledger) return;
    try {
      await chargeLedger(ledger.path, { costUsd: cost, tokens, by: ledger.by });
    } catch (e) {
      this.#ledgerFailed(e);
    }
  }

  /**
   * The cap reached, if any (this session's first, then the batch's); remembered once found.
   * The spend of metered requests still in flight is waited for first (at most 10 s, and not
   * past `signal`: an interrupted run does not wait for a step summary).
   */
  async check(signal?: AbortSignal): Promise<BudgetStop | undefined> {
    if (this.stopped) return this.stopped;
    if (this.#inFlight.size > 0) {
      await settledWithin([...this.#inFlight], IN_FLIGHT_WAIT_MS, signal);
    }
    return await this.#reached();
  }

  /** `check` without waiting for requests in flight. */
  async #reached(): Promise<BudgetStop | undefined> {
    if (this.stopped) return this.stopped;
    const own = reached(this.caps, this.spent(), "run");
    if (own) return this.stopped = own;
    const ledger = this.#options.ledger;
    if (!ledger) return undefined;
    try {
      this.#batch = await readLedger(ledger.path);
    } catch (e) {
      return this.#ledgerFailed(e);
    }
    const batch = reached(this.#batch.caps, this.#batchSpent(this.#batch), "batch");
    if (batch) this.stopped = batch;
    return batch;
  }

  /** A ledger that fails stops the run: the batch's caps could no longer be kept (fail closed). */
  #ledgerFailed(e: unknown): BudgetStop {
    const error = e instanceof Error ? e.message : String(e);
    this.stopped ??= { cap: "ledger", limit: 0, spent: this.spent(), scope: "batch", error };
    return this.stopped;
  }

  /** What this session spent so far. */
  spent(): BudgetSpent {
    const running = this.#since === undefined ? 0 : Date.now() - this.#since;
    return {
      cost_usd: this.#cost,
      tokens: this.#tokens,
      wall_time: (this.#workedMs + running) / 1000,
    };
  }

  /** The record the trajectory and `--json` keep. */
  record(): BudgetRecord {
    const batch = this.#batch && this.#options.ledger
      ? {
        ledger: this.#options.ledger.path,
        caps: this.#batch.caps,
        spent: this.#batchSpent(this.#batch),
      }
      : undefined;
    return {
      caps: this.caps,
      spent: this.spent(),
      ...(batch ? { batch } : {}),
      ...(this.stopped ? { stopped: this.stopped } : {}),
    };
  }

  /** One line per capped scope: spend against each cap (`/cost`, the console). */
  describe(): string[] {
    const lines: string[] = [];
    if (hasCaps(this.caps)) lines.push(`budget: ${againstCaps(this.spent(), this.caps)}`);
    if (this.#batch && hasCaps(this.#batch.caps)) {
      const spent = this.#batchSpent(this.#batch);
      lines.push(`batch budget: ${againstCaps(spent, this.#batch.caps)}`);
    }
    return lines;
  }

  #batchSpent(state: LedgerState): BudgetSpent {
    return {
      cost_usd: state.costUsd,
      tokens: state.tokens,
      wall_time: (Date.now() - state.startedAt) / 1000,
    };
  }
}

const ZERO_USAGE: LLMUsage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  reasoning_tokens: 0,
};

/** Tokens a response used: in and out; Anthropic counts cached input apart, the others inside. */
export function usageTokens(usage: LLMUsage, provider: string): number {
  const cached = provider === "anthropic"
    ? usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    : 0;
  return usage.input_tokens + usage.output_tokens + cached;
}

function reached(
  caps: BudgetCaps,
  spent: BudgetSpent,
  scope: BudgetStop["scope"],
): BudgetStop | undefined {
  const over: [keyof BudgetCaps, number][] = [
    ["max_cost_usd", spent.cost_usd],
    ["max_tokens", spent.tokens],
    ["max_wall_time", spent.wall_time],
  ];
  for (const [cap, value] of over) {
    const limit = caps[cap];
    if (limit !== undefined && value >= limit) return { cap, limit, spent, scope };
  }
  return undefined;
}

/** "$0.0123 of $0.50, 1234 of 10000 tokens, 12 s of 60 s" for the caps that are set. */
function againstCaps(spent: BudgetSpent, caps: BudgetCaps): string {
  const parts: string[] = [];
  if (caps.max_cost_usd !== undefined) {
    parts.push(`${dollars(spent.cost_usd)} of ${dollars(caps.max_cost_usd)}`);
  }
  if (caps.max_tokens !== undefined) parts.push(`${spent.tokens} of ${caps.max_tokens} tokens`);
  if (caps.max_wall_time !== undefined) {
    parts.push(`${spent.wall_time.toFixed(1)} s of ${caps.max_wall_time} s`);
  }
  return parts.join(", ");
}

function dollars(n: number): string {
  return `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`;
}

/** Waits for `promises` to settle, at most `ms` and until `signal` aborts. */
async function settledWithin(
  promises: Promise<unknown>[],
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  if (signal?.aborted) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stop: (() => void) | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    stop = () => resolve();
    signal?.addEventListener("abort", stop, { once: true });
  });
  await Promise.race([Promise.allSettled(promises), timeout]);
  clearTimeout(timer);
  if (stop) signal?.removeEventListener("abort", stop);
}

/** What a request refused at a cap says (a step summary's, `/compact`'s). */
function budgetRefusal(stop: BudgetStop): string {
  if (stop.cap === "ledger") {
    return `the batch's budget ledger failed (${stop.error}), so its caps cannot be kept`;
  }
  const what = stop.scope === "batch" ? "the batch's" : "the";
  return `${what} budget cap is reached: ${spentAgainst(stop)}`;
}

/** What the user reads when a cap stops the run (also the run's final result). */
export function budgetStopMessage(stop: BudgetStop): string {
  if (stop.cap === "ledger") {
    return `Stopped: the batch's budget ledger failed (${stop.error}), so its caps cannot be kept.`;
  }
  const what = stop.scope === "batch" ? "the batch's" : "the";
  return `Stopped at ${what} budget cap: ${spentAgainst(stop)}.`;
}

/** "$0.0002 spent, cap $0.0001 (--max-cost-usd)" for a cap (not the ledger's failure). */
function spentAgainst(stop: BudgetStop): string {
  const spent = stop.cap === "max_cost_usd"
    ? `${dollars(stop.spent.cost_usd)} spent`
    : stop.cap === "max_tokens"
    ? `${stop.spent.tokens} tokens used`
    : `${stop.spent.wall_time.toFixed(1)} s worked`;
  const limit = stop.cap === "max_cost_usd"
    ? dollars(stop.limit)
    : stop.cap === "max_tokens"
    ? `${stop.limit} tokens`
    : `${stop.limit} s`;
  const flag = `--${stop.cap.replaceAll("_", "-")}`;
  return `${spent}, cap ${limit} (${flag})`;
}

/** Where a session's budget comes from: the flags, the config, the model and a batch's ledger. */
export interface BudgetSources {
  flags: BudgetFlags & { budgetLedger?: string };
  config: RunConfig;
  /** Who charges a batch's ledger (the task's workspace). */
  by: string;
}

/**
 * The session's budget, or undefined when no cap is set anywhere. Refuses (UsageError) a cost
 * cap on a model whose price is unknown, and a ledger that cannot be read.
 */
export async function openBudget(sources: BudgetSources): Promise<Budget | undefined> {
  const { flags, config } = sources;
  const caps = mergeCaps(capsFromFlags(flags), config.budget);
  const ledgerPath = flags.budgetLedger;
  if (!hasCaps(caps) && ledgerPath === undefined) return undefined;
  const provider = config.model.provider.provider;
  const model = config.model.settings.model;
  const budget = new Budget(caps, {
    price: (usage, p = provider, m = model) => costOf(usage, p, m, config.prices),
    model,
    ledger: ledgerPath === undefined ? undefined : { path: ledgerPath, by: sources.by },
  });
  try {
    await budget.start();
  } catch (e) {
    if (e instanceof LedgerError) throw new UsageError(`--budget-ledger: ${e.message}`);
    throw e;
  }
  return budget;
}
