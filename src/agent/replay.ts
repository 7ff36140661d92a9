/** Compares a replayed run with its recording, step by step and call by call. */
import type { Trajectory } from "../trajectory/recorder.ts";
import { replacePath } from "../llm/replay.ts";

/** One place where the replay's tool results differ from the recording. */
export interface Divergence {
  step: number;
  call_id: string | null;
  tool: string | null;
  field: "success" | "result" | "error" | "calls" | "missing step";
  recorded: unknown;
  replayed: unknown;
}

/** Every divergence between `recorded` and `replayed` (empty when they agree). */
export function compareRuns(recorded: Trajectory, replayed: Trajectory): Divergence[] {
  // A replay in another directory is compared as if the recording had run there.
  const from = recorded.working_dir;
  const to = replayed.working_dir;
  if (from && to && from !== to) recorded = replacePath(recorded, from, to);
  const found: Divergence[] = [];
  const steps = Math.max(recorded.agent_steps.length, replayed.agent_steps.length);
  for (let i = 0; i < steps; i++) {
    const a = recorded.agent_steps[i];
    const b = replayed.agent_steps[i];
    const step = a?.step_number ?? b?.step_number ?? i + 1;
    if (!a || !b) {
      found.push({
        step,
        call_id: null,
        tool: null,
        field: "missing step",
        recorded: a ? "present" : "absent",
        replayed: b ? "present" : "absent",
      });
      continue;
    }
    if (a.tool_results.length !== b.tool_results.length) {
      found.push({
        step,
        call_id: null,
        tool: null,
        field: "calls",
        recorded: a.tool_results.length,
        replayed: b.tool_results.length,
      });
    }
    a.tool_results.forEach((ra, j) => {
      const rb = b.tool_results[j];
      if (!rb) return;
      for (const field of ["success", "result", "error"] as const) {
        if (ra[field] !== rb[field]) {
          found.push({
            step,
            call_id: ra.call_id,
            tool: ra.name,
            field,
            recorded: ra[field],
            replayed: rb[field],
          });
        }
      }
    });
  }
  return found;
}
