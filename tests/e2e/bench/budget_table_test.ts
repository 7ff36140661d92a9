/**
 * docs/benchmarks.md shows the latency budget as a table; bench/budgets.ts is where each budget is
 * decided. The table must say what the file says, figure by figure.
 */
import assert from "node:assert/strict";
import { BUDGETS, type FigureId } from "../../../bench/budgets.ts";

Deno.test("docs/benchmarks.md's budget table says what bench/budgets.ts decides", async () => {
  const doc = await Deno.readTextFile(new URL("../../../docs/benchmarks.md", import.meta.url));
  const rows = new Map<string, { budget: number; target: number; checked: boolean }>();
  for (const line of doc.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const id = /^`(\w+)`( \(checked\))?$/.exec(cells[1] ?? "");
    if (!id || cells.length < 7) continue;
    rows.set(id[1], { budget: Number(cells[4]), target: Number(cells[5]), checked: !!id[2] });
  }
  for (const [id, budget] of Object.entries(BUDGETS) as [FigureId, typeof BUDGETS[FigureId]][]) {
    const row = rows.get(id);
    assert.ok(row, `docs/benchmarks.md has no row for ${id}`);
    assert.deepEqual(row, {
      budget: budget.budget,
      target: budget.target,
      checked: budget.checked,
    }, `${id}: the table differs from bench/budgets.ts`);
  }
  assert.deepEqual([...rows.keys()].sort(), Object.keys(BUDGETS).sort(), "a row for each figure");
});
