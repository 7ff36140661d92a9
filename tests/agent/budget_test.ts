import assert from "node:assert/strict";
import { join } from "node:path";
import { Budget, BudgetStopError } from "../../src/agent/budget.ts";
import type { LLMClient } from "../../src/llm/types.ts";
import { openLedger } from "../../src/agent/budget_ledger.ts";
import { costReport } from "../../src/cli/interactive/turn_commands.ts";
import type { Session } from "../../src/agent/session.ts";
import { emptyUsage } from "../../src/llm/types.ts";
import { tempDir } from "../helpers/temp.ts";

const usage = { ...emptyUsage(), input_tokens: 100, output_tokens: 20 };
// $1 in, $2 out per million tokens: one response of `usage` costs $0.00014.
const price = (u: typeof usage) => (u.input_tokens * 1 + u.output_tokens * 2) / 1e6;

Deno.test("/cost shows the spend against each budget cap", async () => {
  const budget = new Budget({ max_cost_usd: 0.5, max_tokens: 1000 }, { price, model: "m" });
  await budget.charge(usage, "openai");
  await budget.charge(usage, "openai");
  const session = { config: { prices: {} }, turns: [], budget } as unknown as Session;
  const report = costReport(session);
  assert.match(report, /^budget: \$0\.0003 of \$0\.5000, 240 of 1000 tokens$/m);
});

Deno.test("a batch's ledger: one task's spend stops another task before its first request", async () => {
  await using dir = await tempDir("deft-ledger-");
  const path = join(dir.path, "budget.jsonl");
  await openLedger(path, { max_cost_usd: 0.0002 });
  const first = new Budget({}, { price, model: "m", ledger: { path, by: "t00" } });
  const second = new Budget({}, { price, model: "m", ledger: { path, by: "t01" } });
  await first.start();
  await second.start();
  assert.equal(await second.check(), undefined);
  await first.charge(usage, "openai");
  assert.equal(await second.check(), undefined, "$0.00014 is under the $0.0002 cap");
  await first.charge(usage, "openai");
  const stop = await second.check();
  assert.equal(stop?.scope, "batch");
  assert.equal(stop?.cap, "max_cost_usd");
  assert.ok(Math.abs(stop!.spent.cost_usd - 0.00028) < 1e-12);
  // The task that spent nothing itself still counts nothing of its own.
  assert.equal(second.spent().cost_usd, 0);
});

Deno.test("a batch's ledger that is garbled or swapped for a link stops the run (fail closed)", async () => {
  await using dir = await tempDir("deft-ledger-");
  const path = join(dir.path, "budget.jsonl");
  await openLedger(path, { max_tokens: 1000 });
  const budget = new Budget({}, { price, model: "m", ledger: { path, by: "t00" } });
  await budget.start();
  await Deno.writeTextFile(path, "not a ledger\n");
  const garbled = await budget.check();
  assert.equal(garbled?.cap, "ledger");
  assert.match(garbled?.error ?? "", /not a Deft budget ledger/);

  const other = join(dir.path, "other.jsonl");
  await openLedger(other, { max_tokens: 1000 });
  const linked = new Budget({}, { price, model: "m", ledger: { path: other, by: "t01" } });
  await linked.start();
  await Deno.remove(other);
  await Deno.symlink("/dev/zero", other);
  const stop = await linked.check();
  assert.equal(stop?.cap, "ledger");
  assert.match(stop?.error ?? "", /not a regular file/);
  await linked.charge(usage, "openai");
  assert.equal((await linked.check())?.cap, "ledger", "a failed charge does not throw either");
});

/** A model client that answers every request with `usage` after `delayMs`, counting requests. */
function fakeClient(model: string, delayMs = 0) {
  const client = {
    provider: "openai",
    model,
    requests: 0,
    chat: async () => {
      client.requests++;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { content: "ok", tool_calls: [], usage, finish_reason: "stop" };
    },
  };
  return client;
}

Deno.test("a metered client: refused at a reached cap, charged at its own model's price", async () => {
  // The summariser's model costs ten times the session's.
  const prices: Record<string, number> = { m: 1, labeler: 10 };
  const priceOf = (u: typeof usage, _p?: string, model = "m") =>
    prices[model] === undefined ? null : (u.input_tokens + u.output_tokens) * prices[model] / 1e6;
  const budget = new Budget({ max_cost_usd: 0.002 }, { price: priceOf, model: "m" });
  await budget.start();
  const inner = fakeClient("labeler");
  const metered = budget.meter(inner as unknown as LLMClient);
  await metered.chat([], []);
  assert.ok(Math.abs(budget.spent().cost_usd - 0.0012) < 1e-12, "120 tokens at $10 a million");
  await metered.chat([], []);
  await assert.rejects(() => metered.chat([], []), (e: Error) => {
    assert.ok(e instanceof BudgetStopError);
    assert.match(e.message, /^the budget cap is reached: \$0\.0024 spent, cap \$0\.0020/);
    return true;
  });
  assert.equal(inner.requests, 2, "the refused request was never sent");
  assert.throws(
    () => budget.meter(fakeClient("unpriced") as unknown as LLMClient),
    /price of model 'unpriced' is unknown/,
  );
});

Deno.test("a check waits for the spend of a metered request still in flight", async () => {
  const budget = new Budget({ max_tokens: 100 }, { price, model: "m" });
  const metered = budget.meter(fakeClient("m", 300) as unknown as LLMClient);
  void metered.chat([], []);
  const stop = await budget.check();
  assert.equal(stop?.cap, "max_tokens", "the summary's 120 tokens counted before deciding");
});

Deno.test("a child's run inside its parent's turn does not stop the parent's clock", async () => {
  const budget = new Budget({ max_wall_time: 1000 }, { price, model: "m" });
  budget.begin();
  budget.begin(); // a child agent's run starts
  budget.end(); // and ends
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.ok(
    budget.spent().wall_time >= 0.19,
    `the parent still works: ${budget.spent().wall_time}`,
  );
  budget.end();
  const worked = budget.spent().wall_time;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(budget.spent().wall_time, worked, "stopped once the parent's turn ended");
});

Deno.test("/cost lists the step summaries' tokens and cost on a line of their own", () => {
  const summaries = { ...emptyUsage(), input_tokens: 1000, output_tokens: 100 };
  const session = {
    config: { prices: { labeler: { input: 1, output: 2 } } },
    turns: [{
      provider: "openai",
      model: "labeler",
      usage: summaries,
      calls: [],
      kind: "summaries",
    }],
  } as unknown as Session;
  assert.match(costReport(session), /^summaries +1000 in, 100 out {2}\$0\.0012 {2}labeler$/m);
});

Deno.test("an interrupted run's check does not wait for a step summary in flight", async () => {
  const budget = new Budget({ max_tokens: 100 }, { price, model: "m" });
  const metered = budget.meter(fakeClient("m", 3000) as unknown as LLMClient);
  const asked = metered.chat([], []);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  const started = performance.now();
  await budget.check(controller.signal);
  assert.ok(performance.now() - started < 2000, "answered soon after the interrupt");
  await asked;
});
