/**
 * Files for `deft report` tests: an ordinary trajectory, a hostile one (markup, script, event
 * handlers, `javascript:` links, CSS, escape sequences, a 1 MB line, broken UTF-8), and batch output
 * folders of any size. Writes files only; starts no process.
 */
import { join } from "node:path";

const USAGE = {
  input_tokens: 1200,
  output_tokens: 80,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 300,
  reasoning_tokens: 0,
};

/** Text that, if it ever took effect in the page, would leave a mark the tests look for. */
export const HOSTILE = {
  script:
    `<script>document.title="PWNED-script";document.documentElement.dataset.pwned="1"</script>`,
  handler: `<img src=x onerror="document.body.appendChild(document.createElement('pwned-img'))">`,
  svg: `<svg onload="document.body.appendChild(document.createElement('pwned-svg'))"></svg>`,
  link: `<a id="pwned-link" href="javascript:document.title='PWNED-link'">click me</a>`,
  css:
    `<style>body{display:none!important}</style><div style="position:fixed;inset:0;background:red">`,
  remote:
    `<img src="http://127.0.0.1:9/pwned.png"><link rel="stylesheet" href="https://example.invalid/x.css">`,
  breakout: `</pre></details></div><iframe src="https://example.invalid/"></iframe><pre>`,
  ansi: `\x1b[31mred\x1b[0m \x1b]0;PWNED-osc\x07 bell\x07 nul\x00 bidi\u202etxt.exe`,
  comment: `<!-- --><!--`,
  cdata: `]]><![CDATA[`,
};

/** Every hostile string, joined. */
export const HOSTILE_TEXT = Object.values(HOSTILE).join("\n");

/** A 1 MB line. */
export const HUGE_LINE = "A".repeat(1_000_000);

interface StepSpec {
  text: string;
  tool: string;
  args: unknown;
  output: string | null;
  error?: string | null;
  success?: boolean;
}

/** A trajectory in Deft's format with the given steps. */
export function trajectory(
  task: string,
  steps: StepSpec[],
  options: { success?: boolean; start?: Date; container?: boolean; finalResult?: string } = {},
): Record<string, unknown> {
  const start = options.start ?? new Date("2026-12-01T10:00:00Z");
  const agent_steps = steps.map((s, i) => {
    const call = { call_id: `call_${i + 1}`, name: s.tool, arguments: s.args };
    const response = {
      content: s.text,
      tool_calls: [call],
      usage: USAGE,
      finish_reason: "tool_calls",
      model: "mock-model",
    };
    return {
      step_number: i + 1,
      timestamp: new Date(start.getTime() + (i + 1) * 1500).toISOString(),
      state: "completed",
      llm_response: response,
      tool_calls: [call],
      tool_results: [{
        call_id: call.call_id,
        name: s.tool,
        success: s.success ?? true,
        result: s.output,
        error: s.error ?? null,
      }],
      reflection: null,
      error: null,
    };
  });
  return {
    format_version: 1,
    task,
    working_dir: "/tmp/ws",
    session_id: "20261201_100000_abcdef",
    resumed_from: null,
    start_time: start.toISOString(),
    end_time: new Date(start.getTime() + steps.length * 1500 + 500).toISOString(),
    provider: "openai_compatible",
    model: "mock-model",
    max_steps: 200,
    llm_interactions: [],
    agent_steps,
    success: options.success ?? true,
    final_result: options.finalResult ?? "done",
    execution_time: steps.length * 1.5 + 0.5,
    total_usage: {
      ...USAGE,
      input_tokens: USAGE.input_tokens * steps.length,
      output_tokens: USAGE.output_tokens * steps.length,
    },
    ...(options.container
      ? { container: { runtime: "docker", image: "python:3.12", id: "0123456789abcdef" } }
      : {}),
  };
}

/** An ordinary run: a view, an edit, a failing check, a denied command, the check passing. */
export function ordinaryTrajectory(): Record<string, unknown> {
  return trajectory("Make check.py pass.", [
    {
      text: "Reading the module.",
      tool: "str_replace_based_edit_tool",
      args: { command: "view", path: "/tmp/ws/calc.py" },
      output: "1\tdef add(a, b):\n2\t    return a - b\n",
    },
    {
      text: "add() subtracts; fixing it.",
      tool: "str_replace_based_edit_tool",
      args: {
        command: "str_replace",
        path: "/tmp/ws/calc.py",
        old_str: "    return a - b",
        new_str: "    return a + b",
      },
      output: "The file /tmp/ws/calc.py has been edited.",
    },
    {
      text: "Cleaning up first.",
      tool: "bash",
      args: { command: "rm -rf build" },
      output: null,
      error: "The user denied this command. It did not run. Try another way.",
      success: false,
    },
    {
      text: "Running the check.",
      tool: "bash",
      args: { command: "python3 check.py" },
      output: "check failed: mul(3, 4) = 7\n",
      success: false,
    },
    {
      text: "All done.",
      tool: "task_done",
      args: {},
      output: "Task completed.",
    },
  ], { container: true });
}

/**
 * The hostile trajectory, as the bytes of its file: every hostile string in the task, the model's
 * text, a tool's name, arguments and output, the error and the final answer; a 1 MB output line;
 * and a lone surrogate (what a decoder makes of a stray byte) in an output.
 */
export function hostileTrajectoryText(): string {
  const data = trajectory(HOSTILE_TEXT, [
    {
      text: HOSTILE_TEXT,
      tool: `bash</span>${HOSTILE.script}`,
      args: { command: HOSTILE_TEXT, [HOSTILE.handler]: HOSTILE.link },
      output: `${HOSTILE_TEXT}\nLONE_SURROGATE_HERE`,
      error: HOSTILE.breakout,
      success: false,
    },
    {
      text: "a huge line next",
      tool: "bash",
      args: { command: "cat big.txt" },
      output: `${HUGE_LINE}\nafter the huge line`,
    },
    {
      text: HOSTILE.css,
      tool: "str_replace_based_edit_tool",
      args: {
        command: "str_replace",
        path: HOSTILE.link,
        old_str: HOSTILE.script,
        new_str: HOSTILE.handler,
      },
      output: HOSTILE.remote,
    },
  ], { success: false, finalResult: HOSTILE_TEXT });
  // JSON.stringify writes a lone surrogate as the escape \udcff, which is what a file gets.
  return JSON.stringify(data, null, 2).replace("LONE_SURROGATE_HERE", "bad byte: \\udcff here");
}

/** Bytes that are not UTF-8, for a patch file. */
export const NOT_UTF8 = new Uint8Array([0x2b, 0x20, 0xff, 0xfe, 0xc3, 0x28, 0x0a]);

/** How one synthetic batch task turns out. */
export interface SyntheticTask {
  id: string;
  status: "passed" | "failed" | "error" | "timeout" | "interrupted";
  steps: number;
  cost: number;
  duration: number;
}

/** `n` tasks with a spread of outcomes, steps, costs and durations (the same every time). */
export function syntheticTasks(n: number, steps: number): SyntheticTask[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `repo__task-${String(i).padStart(4, "0")}`,
    status: i % 5 === 4 ? "failed" : i % 17 === 16 ? "timeout" : "passed",
    steps: steps - (i % 7),
    cost: 0.02 + ((i * 13) % 50) / 100,
    duration: 30 + ((i * 29) % 300),
  }));
}

/**
 * A batch output folder at `dir` as `deft batch --out` leaves it: results.jsonl,
 * predictions.jsonl, and per task result.json, trajectory.json and patch.diff.
 */
export async function writeBatch(dir: string, tasks: SyntheticTask[]): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const results: string[] = [];
  const predictions: string[] = [];
  for (const [index, t] of tasks.entries()) {
    const taskDir = join(dir, t.id);
    await Deno.mkdir(taskDir, { recursive: true });
    const steps: StepSpec[] = Array.from({ length: t.steps }, (_, s) => ({
      text: `Step ${s + 1}: looking at the next part of the code.`,
      tool: s % 3 === 1 ? "str_replace_based_edit_tool" : "bash",
      args: s % 3 === 1
        ? {
          command: "str_replace",
          path: "/testbed/src/mod.py",
          old_str: "x = 1\ny = 2",
          new_str: "x = 2\ny = 3",
        }
        : { command: `grep -rn "def handler_${s}" src/ | head -20` },
      output: Array.from(
        { length: 12 },
        (_, l) => `src/mod_${l}.py:${l * 7}: def handler_${s}(self, value):`,
      )
        .join("\n"),
      success: s % 11 !== 10,
    }));
    const traj = trajectory(`Fix issue ${t.id}: the handler returns the wrong value.`, steps, {
      success: t.status === "passed",
    });
    await Deno.writeTextFile(join(taskDir, "trajectory.json"), JSON.stringify(traj));
    const patch =
      `diff --git a/src/mod.py b/src/mod.py\n--- a/src/mod.py\n+++ b/src/mod.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y = 2\n`;
    await Deno.writeTextFile(join(taskDir, "patch.diff"), patch);
    const result = {
      id: t.id,
      index,
      status: t.status,
      success: t.status === "passed",
      steps: t.steps,
      tokens: { input: 1200 * t.steps, output: 80 * t.steps, total: 1280 * t.steps },
      cost: t.cost,
      duration: t.duration,
      test_exit_code: t.status === "passed" ? 0 : 1,
      exit_code: 0,
      error: null,
      started_at: "2026-12-01T10:00:00.000Z",
      finished_at: "2026-12-01T10:05:00.000Z",
      runner: "local",
    };
    await Deno.writeTextFile(join(taskDir, "result.json"), JSON.stringify(result, null, 2));
    if (t.status !== "interrupted") results.push(JSON.stringify(result));
    predictions.push(
      JSON.stringify({ instance_id: t.id, model_name_or_path: "deft", model_patch: patch }),
    );
  }
  await Deno.writeTextFile(join(dir, "results.jsonl"), results.join("\n") + "\n");
  await Deno.writeTextFile(join(dir, "predictions.jsonl"), predictions.join("\n") + "\n");
}
