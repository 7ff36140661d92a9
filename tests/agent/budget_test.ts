import assert from "node:assert/strict";
import { join } from "node:path";
import { Budget } from "../../src/agent/budget.ts";
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
