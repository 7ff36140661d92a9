import assert from "node:assert/strict";
import { ok, type ToolContext } from "../../src/tools/base.ts";
import type { ToolClass } from "../../src/tools/catalog_types.ts";
import { InProcessHost } from "../../src/tools/in_process.ts";
import { FakeTool, testContext } from "../helpers/tools.ts";

/** A loader that counts loads and builds, and whose tools answer with their build number. */
function counting(failFirst = false) {
  const counts = { loads: 0, built: 0, closed: 0 };
  const load = (name: string): Promise<ToolClass> => {
    counts.loads++;
    if (failFirst && counts.loads === 1) return Promise.reject(new Error("no module"));
    return Promise.resolve(
      class extends FakeTool {
        constructor(context: ToolContext) {
          const n = ++counts.built;
          super(name, [], () => ok(`${name} #${n}`), () => {
            counts.closed++;
            return Promise.resolve();
          }, context);
        }
      },
    );
  };
  return { counts, load };
}

Deno.test("in process: a tool is loaded and built on its first call, then kept", async () => {
  const { counts, load } = counting();
  const host = new InProcessHost(testContext(), ["a", "b"], load);
  assert.equal(counts.loads, 0);
  assert.equal((await host.call("a", {})).output, "a #1");
  assert.equal((await host.call("a", {})).output, "a #1");
  assert.deepEqual(counts, { loads: 1, built: 1, closed: 0 });
  assert.deepEqual(await host.closeAll(), []);
  assert.equal(counts.closed, 1, "b was never built, so there was nothing to close");
});

Deno.test("in process: a closed tool comes back fresh on its next call", async () => {
  const { counts, load } = counting();
  const host = new InProcessHost(testContext(), ["a"], load);
  await host.call("a", {});
  await host.close("a");
  assert.equal((await host.call("a", {})).output, "a #2");
  assert.equal(counts.closed, 1);
});

Deno.test("in process: a module that failed to load is tried again", async () => {
  const { load } = counting(true);
  const host = new InProcessHost(testContext(), ["a"], load);
  await assert.rejects(host.call("a", {}), /no module/);
  assert.equal((await host.call("a", {})).output, "a #1");
});

Deno.test("in process: only the tools named at construction run", async () => {
  const { counts, load } = counting();
  const host = new InProcessHost(testContext(), ["a"], load);
  await assert.rejects(host.call("b", {}), /the tool 'b' does not run here/);
  assert.equal(counts.loads, 0);
});

Deno.test("in process: close errors are collected, named by tool", async () => {
  const failing = (): Promise<ToolClass> =>
    Promise.resolve(
      class extends FakeTool {
        constructor(context: ToolContext) {
          super("x", [], undefined, () => Promise.reject(new Error("stuck")), context);
        }
      },
    );
  const host = new InProcessHost(testContext(), ["x"], failing);
  await host.call("x", {});
  assert.deepEqual(await host.closeAll(), ["closing tool 'x' failed: Error: stuck"]);
});
