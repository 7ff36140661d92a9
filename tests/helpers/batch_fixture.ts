/**
 * A batch fixture: small git repositories, each with a bug (`add` subtracts) and a check script,
 * and scripted trajectories that `deft run --replay` plays: look, fix, verify, task_done. Special
 * kinds: `hang` runs a long sleep (for time limits), `idle` calls task_done without fixing (so the
 * task's test fails).
 */
import { join } from "node:path";
import { git as gitIn } from "./repo.ts";

/** Where every scripted trajectory says it ran; replay maps it to each task's checkout. */
const RECORDED = "/recorded/workspace";

/** What a fixture task does. */
export type TaskKind = "fix" | "hang" | "idle";

/** A task line of the fixture's TASKS.jsonl. */
export interface FixtureTask {
  id: string;
  repo: string;
  task: string;
  test: string;
  replay: string;
  commit?: string;
  timeout?: number;
}

/** The sleep a `hang` task runs; tests look for it in /proc to prove it was killed. */
export function hangSeconds(tag: number): number {
  return 7000 + tag;
}

function git(cwd: string, ...args: string[]): Promise<string> {
  return gitIn(cwd, "-c", "user.name=fixture", "-c", "user.email=fixture@deft.invalid", ...args);
}

/** Creates one repository with two commits (the bug is in the second); returns its HEAD. */
export async function makeRepo(dir: string, n: number): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  await git(dir, "init", "-q", "-b", "main");
  await Deno.writeTextFile(join(dir, "README.md"), `repository ${n}\n`);
  await git(dir, "add", ".");
  await git(dir, "commit", "-qm", "start");
  await Deno.writeTextFile(
    join(dir, "calc.py"),
    `# repository ${n}\n\ndef add(a, b):\n    return a - b\n`,
  );
  await Deno.writeTextFile(
    join(dir, "check.py"),
    "from calc import add\nassert add(2, 3) == 5, 'add is wrong'\nprint('ok')\n",
  );
  await git(dir, "add", ".");
  await git(dir, "commit", "-qm", "calculator");
  return await git(dir, "rev-parse", "HEAD");
}

/**
 * One recorded model response: a single call of tool `name` (call id `call_N`), with `content`
 * said beside it.
 */
export function recordedCall(
  name: string,
  args: Record<string, unknown>,
  n: number,
  content = `Step ${n}.`,
): Record<string, unknown> {
  return {
    timestamp: new Date(0).toISOString(),
    provider: "openai_compatible",
    model: "scripted",
    input_messages: [],
    tools_available: [],
    response: {
      content,
      tool_calls: [{ call_id: `call_${n}`, name, arguments: args }],
      usage: {
        input_tokens: 100,
        output_tokens: 20,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
      finish_reason: "tool_calls",
      model: "scripted",
    },
  };
}

/** The call that fixes the fixture's bug: `add` in DIR/calc.py adds. */
export function fixAddCall(dir: string, n: number, content?: string): Record<string, unknown> {
  return recordedCall(
    "str_replace_based_edit_tool",
    {
      command: "str_replace",
      path: `${dir}/calc.py`,
      old_str: "    return a - b",
      new_str: "    return a + b",
    },
    n,
    content,
  );
}

/**
 * A recorded trajectory that `deft run --replay` plays: `steps`, then a task_done (said with
 * `done`, default `Step N.`), on `workingDir` (which replay maps to the task's checkout).
 */
export function recordedTrajectory(
  task: string,
  workingDir: string,
  steps: Record<string, unknown>[],
  options: { maxSteps?: number; done?: string } = {},
): Record<string, unknown> {
  return {
    task,
    working_dir: workingDir,
    start_time: new Date(0).toISOString(),
    end_time: null,
    provider: "openai_compatible",
    model: "scripted",
    max_steps: options.maxSteps ?? 20,
    llm_interactions: [...steps, recordedCall("task_done", {}, steps.length + 1, options.done)],
    agent_steps: [],
    success: false,
    final_result: null,
    execution_time: 0,
    total_usage: { input_tokens: 0, output_tokens: 0 },
  };
}

/** A scripted trajectory for `kind`. */
export function scriptedTrajectory(kind: TaskKind, tag = 0): Record<string, unknown> {
  const steps = [];
  if (kind === "hang") {
    steps.push(
      recordedCall("bash", { command: `sleep ${hangSeconds(tag)}` }, steps.length, "Waiting."),
    );
  }
  if (kind === "fix") {
    steps.push(
      recordedCall("bash", { command: `cd ${RECORDED} && python3 check.py` }, 1, "Reproduce."),
      fixAddCall(RECORDED, 2, "Fix."),
    );
  }
  return recordedTrajectory("Make check.py pass.", RECORDED, steps, { done: "Done." });
}

/**
 * Writes `count` repositories, trajectories and DIR/tasks.jsonl; `kinds` picks a kind per task
 * index (default: every task fixes its repository). Returns the task file's path and the tasks.
 */
export async function makeBatchFixture(
  dir: string,
  count: number,
  kinds: (i: number) => TaskKind = () => "fix",
  extra: (i: number) => Partial<FixtureTask> = () => ({}),
): Promise<{ tasksFile: string; tasks: FixtureTask[] }> {
  const tasks: FixtureTask[] = [];
  await Deno.mkdir(join(dir, "trajectories"), { recursive: true });
  for (let i = 0; i < count; i++) {
    const id = `t${String(i).padStart(2, "0")}`;
    const repo = join(dir, "repos", id);
    const head = await makeRepo(repo, i);
    const kind = kinds(i);
    const replay = join(dir, "trajectories", `${id}.json`);
    await Deno.writeTextFile(replay, JSON.stringify(scriptedTrajectory(kind, i)));
    tasks.push({
      id,
      repo: `repos/${id}`,
      commit: head,
      task: `Make check.py pass in repository ${i}.`,
      test: "python3 check.py",
      replay: `trajectories/${id}.json`,
      ...extra(i),
    });
  }
  const tasksFile = join(dir, "tasks.jsonl");
  await Deno.writeTextFile(tasksFile, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
  return { tasksFile, tasks };
}

/** A test command that passes but leaves a process running outside its process group. */
export function daemonTest(tag: number): string {
  return `setsid sleep ${hangSeconds(tag)} </dev/null >/dev/null 2>&1 & python3 check.py`;
}

/**
 * Pids of processes whose command line contains `text`. Read by bash: Deno reads /proc only with
 * --allow-all, and the test task grants less.
 */
export function processesWith(text: string): number[] {
  // Builtins only (no subshell that would show this script's own command line), skipping itself.
  const script = `for f in /proc/[0-9]*/cmdline; do
    p=\${f#/proc/} p=\${p%/cmdline}
    [[ $p == "$$" ]] && continue
    mapfile -d '' -t a < "$f" 2>/dev/null || continue
    [[ "\${a[*]}" == *"$1"* ]] && echo "$p"
  done; true`;
  const out = new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-c", script, "scan", text],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  const self = new Set([String(Deno.pid)]);
  return new TextDecoder().decode(out.stdout).split("\n").filter((p) => p && !self.has(p))
    .map(Number);
}
