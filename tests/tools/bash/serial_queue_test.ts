/** Jobs run one at a time, in order, even when one fails. */
import assert from "node:assert/strict";
import { SerialQueue } from "../../../src/tools/bash/serial_queue.ts";

Deno.test("serial queue: jobs never overlap and keep their order", async () => {
  const queue = new SerialQueue();
  const events: string[] = [];
  const job = (name: string, ms: number, fail = false) => () =>
    new Promise<string>((resolve, reject) => {
      events.push(`start ${name}`);
      setTimeout(() => {
        events.push(`end ${name}`);
        fail ? reject(new Error(name)) : resolve(name);
      }, ms);
    });
  const results = await Promise.allSettled([
    queue.run(job("a", 30)),
    queue.run(job("b", 1, true)),
    queue.run(job("c", 10)),
  ]);
  await queue.idle();
  assert.deepEqual(events, ["start a", "end a", "start b", "end b", "start c", "end c"]);
  assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
});
