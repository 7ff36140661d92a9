/**
 * A long headless run: `deft run` against a model that answers at once, one small bash call per
 * step, 500 steps. Deft's own time per step (the step's wall time: the model's answer and the
 * tool's work are both near zero here) is compared between steps 10–60 and 450–500, from the
 * trajectory's step times. Target: the late steps within 1.2x of the early ones (a run whose every
 * step rewrites or re-masks what came before grows quadratically).
 *
 * Usage: `deno run -A bench/long_session_bench.ts [--steps N]` (default 500)
 */
import { join } from "node:path";
import { deftFlags } from "../scripts/deft_flags.ts";
import { chatToolCalls, MockLLM } from "../tests/helpers/mock_llm.ts";

const TARGET_RATIO = 1.2;
const ROOT = new URL("..", import.meta.url).pathname;

/** Runs the benchmark and prints its line. */
export default async function longSessionBench(args: string[]): Promise<void> {
  const at = args.indexOf("--steps");
  const steps = at >= 0 ? Number(args[at + 1]) : 500;
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-bench-long-" }));
  let asked = 0;
  const mock = MockLLM.start([], () => {
    asked++;
    return asked < steps
      ? chatToolCalls([["bash", { command: `echo step ${asked}` }]])
      : chatToolCalls([["task_done", {}]]);
  });
  try {
    const trajectory = join(workspace, ".traj.json");
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...deftFlags(),
        `${ROOT}main.ts`,
        "run",
        "keep going",
        "-w",
        workspace,
        "-p",
        "openai_compatible",
        "-m",
        "mock-model",
        "--model-base-url",
        `${mock.url}/v1`,
        "-k",
        "k",
        "--max-steps",
        String(steps + 5),
        "-t",
        trajectory,
      ],
      env: { NO_COLOR: "1", DEFT_RETRY_BASE_MS: "10" },
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      console.log(
        `long session: deft run failed: ${new TextDecoder().decode(out.stderr).slice(-400)}`,
      );
      return;
    }
    const data = JSON.parse(await Deno.readTextFile(trajectory));
    const times: number[] = data.agent_steps.map((s: { timestamp: string }) =>
      Date.parse(s.timestamp)
    );
    // The mean over a window of 50 steps: step times are whole milliseconds, a few each.
    const perStep = (from: number, to: number) => (times[to - 1] - times[from - 1]) / (to - from);
    const early = perStep(10, 60);
    const late = perStep(steps - 50, steps);
    const ratio = late / Math.max(early, 0.5);
    console.log(
      `long session: ${times.length} steps; Deft's time per step ${early.toFixed(1)} ms at ` +
        `steps 10-60, ${late.toFixed(1)} ms at ${steps - 50}-${steps}; late/early ` +
        `${ratio.toFixed(2)}x (target <= ${TARGET_RATIO})` +
        (ratio <= TARGET_RATIO ? "" : " MISSED"),
    );
  } finally {
    await mock.close();
    await Deno.remove(workspace, { recursive: true });
  }
}

if (import.meta.main) await longSessionBench(Deno.args);
