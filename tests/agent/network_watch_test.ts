// The trajectory's network list is bounded, and what it does not list is counted, not lost.
import assert from "node:assert/strict";
import type { AgentConsole } from "../../src/agent/console.ts";
import { watchNetwork } from "../../src/agent/network_watch.ts";
import { reportNetworkDecision } from "../../src/policy/network/decisions.ts";
import { TrajectoryRecorder } from "../../src/trajectory/recorder.ts";
import { tempDir } from "../helpers/temp.ts";

Deno.test("network watch: past 2000 decisions the trajectory counts the rest; every refusal is still said", async () => {
  await using dir = await tempDir("deft-watch-");
  const recorder = new TrajectoryRecorder(`${dir.path}/trajectory.json`, {
    task: "t",
    provider: "mock",
    model: "m",
    max_steps: 1,
  });
  const notes: string[] = [];
  const console = { note: (m: string) => notes.push(m) } as unknown as AgentConsole;
  const stop = watchNetwork(console, recorder);
  try {
    for (let i = 0; i < 2500; i++) {
      reportNetworkDecision({
        host: `h${i}.example`,
        port: 443,
        allowed: false,
        reason: "not in allow list",
      });
    }
  } finally {
    stop();
  }
  assert.equal(recorder.data.network?.length, 2000);
  assert.equal(recorder.data.network_not_recorded, 500);
  assert.equal(notes.filter((n) => n.startsWith("network: blocked")).length, 2500);
  assert.equal(notes.at(-1), "network: blocked h2499.example:443 (not in allow list)");
});
