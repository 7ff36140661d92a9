/**
 * The `task` tool's test set-up (tests/e2e/agent/subagent*_test.ts): a parent Deft whose mock
 * model tells the parent's requests from each child's by their task text (the parent's names
 * PARENT, each child's prompt names what it is to do), a home that turns the tool on, and the
 * check that nothing of a child is left behind.
 */
import assert from "node:assert/strict";
import { runDeft } from "./deft.ts";
import { chatText, chatToolCalls, MockLLM, type MockReply, type MockRequest } from "./mock_llm.ts";
import { git } from "./repo.ts";
import { tempDirUntilExit } from "./temp.ts";

// deno-lint-ignore no-explicit-any
type Message = any;

/** One request's task text, its project root, and the tool results so far. */
export interface Conversation {
  text: string;
  root: string;
  results: string[];
}

/** The task message's text and root, and the tool results so far, of one request. */
export function conversation(req: MockRequest): Conversation {
  const messages: Message[] = req.body.messages;
  const first = messages.find((m) => m.role === "user");
  const text = typeof first.content === "string"
    ? first.content
    : first.content.map((p: { text?: string }) => p.text ?? "").join("");
  const root = /\[Project root path\]:\n(.*)\n/.exec(text)?.[1] ?? "";
  const results = messages.filter((m) => m.role === "tool").map((m) =>
    typeof m.content === "string" ? m.content : JSON.stringify(m.content)
  );
  return { text, root, results };
}

/** What a parent's config sets: its tools, parallel calls, the children's deadline, hooks. */
export interface TaskConfig {
  tools?: string[];
  parallel?: boolean;
  deadline?: number;
  /** Config lines for `hooks:`, as they are. */
  hooks?: string;
}

/**
 * The user config that points Deft at the mock model at `url` (as `mock-model`, 8 steps) with the
 * `task` tool on; by default the tools are bash, task_done and task, and nothing else is set.
 */
export function taskConfigYaml(url: string, config: TaskConfig = {}): string {
  const tools = config.tools ?? ["bash", "task_done", "task"];
  const parallel = config.parallel === undefined ? "" : `, parallel_tool_calls: ${config.parallel}`;
  return [
    "model_providers:",
    `  mine: { provider: openai_compatible, base_url: ${url}/v1, api_key: k }`,
    "models:",
    `  main: { model_provider: mine, model: mock-model${parallel} }`,
    "agents:",
    `  deft_agent: { model: main, max_steps: 8, tools: [${tools.join(", ")}] }`,
    ...config.deadline === undefined ? [] : [`subagents: { deadline_seconds: ${config.deadline} }`],
    ...config.hooks === undefined ? [] : [config.hooks],
    "",
  ].join("\n");
}

/** A home with a trusted user config: the `task` tool on, children's deadline `deadline` s. */
export async function writeTaskHome(
  dir: string,
  url: string,
  deadline = 60,
  parallel = false,
  hooks = "",
): Promise<void> {
  await Deno.mkdir(`${dir}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/.config/deft/config.yaml`,
    taskConfigYaml(url, {
      tools: ["bash", "str_replace_based_edit_tool", "task_done", "task"],
      parallel,
      deadline,
      hooks: hooks.replaceAll("$HOME_DIR", dir),
    }),
  );
}

/** How the parent is run: the children's deadline, parallel calls, extra flags, hooks. */
export interface ParentOptions {
  deadline?: number;
  parallel?: boolean;
  extra?: string[];
  /** Config lines for `hooks:`; `$HOME_DIR` stands for the home. */
  hooks?: string;
  /** Files written into the home by name (hook scripts). */
  scripts?: Record<string, string>;
}

/** What a parent's `deft run` did. */
export interface Ran {
  code: number;
  stderr: string;
  /** The `task` results the parent got, in order. */
  taskResults: string[];
  seconds: number;
  /** The run's TMPDIR, where children's worktrees go. */
  tmp: string;
  home: string;
}

/** Runs `deft run PARENT -w repo` against `mock` with a home of its own (gone at exit). */
export async function runParent(
  repo: string,
  mock: MockLLM,
  options: ParentOptions = {},
): Promise<Ran> {
  const homeDir = await tempDirUntilExit("deft-home-");
  const tmp = await tempDirUntilExit("deft-tmp-");
  await writeTaskHome(homeDir, mock.url, options.deadline, options.parallel, options.hooks);
  for (const [name, body] of Object.entries(options.scripts ?? {})) {
    await Deno.writeTextFile(`${homeDir}/${name}`, body);
  }
  const started = performance.now();
  const out = await runDeft([
    "run",
    "PARENT",
    "-w",
    repo,
    "-t",
    `${homeDir}/t.json`,
    ...options.extra ?? [],
  ], {
    env: {
      HOME: homeDir,
      XDG_CONFIG_HOME: `${homeDir}/.config`,
      XDG_STATE_HOME: `${homeDir}/state`,
      TMPDIR: tmp,
      DEFT_RETRY_BASE_MS: "5",
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const trajectory = JSON.parse(await Deno.readTextFile(`${homeDir}/t.json`));
  // deno-lint-ignore no-explicit-any
  const taskResults = trajectory.agent_steps.flatMap((s: any) =>
    // deno-lint-ignore no-explicit-any
    s.tool_results.filter((r: any) => r.name === "Task").map((r: any) => r.result ?? r.error)
  );
  return { code: out.code, stderr: out.stderr, taskResults, seconds, tmp, home: homeDir };
}

/** What a repository holds besides its own work tree: worktrees, branches, Deft's folders. */
export async function leftovers(repo: string, tmp: string): Promise<void> {
  assert.equal((await git(repo, "worktree", "list")).split("\n").length, 1, "no worktree is left");
  assert.equal((await git(repo, "branch", "--list")).split("\n").length, 1, "no branch is left");
  const left = [...Deno.readDirSync(tmp)].filter((e) => e.name.startsWith("deft-subagent-"));
  assert.deepEqual(left, [], "no worktree folder is left");
}

/** The parent: one step of `task` calls, then a text answer once their results are in. */
export function parent(calls: [string, unknown][]): (req: MockRequest) => MockReply | undefined {
  return (req) => {
    const c = conversation(req);
    if (!c.text.includes("PARENT")) return undefined;
    return c.results.length === 0 ? chatToolCalls(calls) : chatText("parent done");
  };
}

/**
 * The usual shape of a `task` test: a mock model whose parent makes the `calls` in one step and
 * whose children answer with `child`, the parent run in `repo`, then `check` with what it did and
 * the model (closed afterwards, whatever `check` threw).
 */
export async function withTaskRun<T>(
  repo: string,
  calls: [string, unknown][],
  child: (req: MockRequest, c: Conversation) => MockReply,
  options: ParentOptions,
  check: (ran: Ran, mock: MockLLM) => T | Promise<T>,
): Promise<T> {
  const script = parent(calls);
  const mock = MockLLM.start([], (req) => script(req) ?? child(req, conversation(req)));
  try {
    return await check(await runParent(repo, mock, options), mock);
  } finally {
    await mock.close();
  }
}
