/**
 * The command line's tables, each option and each command's summary declared once: `COMMANDS`
 * (every command's summary and arguments), `LAUNCH` (bare `deft`), the pipeline commands' table
 * and `FAST_COMMANDS`. `program.ts` builds commander from them for help and errors; `help.ts`
 * writes `deft --help` from them; `fast.ts` parses `FAST_COMMANDS` (by hand, no `node:` module), so
 * that `deft tool`, `tools`, `serve`, `sessions`, `config`, `interactive` and the launch line
 * (`LAUNCH`) start without loading commander (which pulls in most of Node's compatibility layer
 * and doubles start-up). This module stays light (no `node:` or npm module): `deft --help` loads
 * it. The options only other commands use are declared in `program.ts`.
 */
import { SANDBOX_MODES } from "../policy/sandbox_modes.ts";
import { APPROVAL_MODES } from "../gate/modes.ts";
import { COLOR_MODES } from "./console/style.ts";
import { OUTPUT_FORMATS } from "./console/formats.ts";

/** One option of a command. */
export interface OptionSpec {
  /** Long name without dashes, e.g. `working-dir`. */
  long: string;
  short?: string;
  /** Placeholder when the option takes a value, e.g. `dir`. */
  value?: string;
  /** The value may be left out (`[id]` rather than `<id>`). */
  optional?: boolean;
  description: string;
  choices?: readonly string[];
  default?: string;
  /** The value must be an integer: ≥ 1 (`positive`) or ≥ 0. Commander checks it. */
  integer?: "positive" | "non-negative";
  /** The option may be given again; the values collect in a list (default: none). */
  repeatable?: boolean;
}

/** One positional argument. */
export interface ArgumentSpec {
  name: string;
  required: boolean;
  /** It takes every remaining word (`<path...>`). */
  variadic?: boolean;
  description: string;
}

/** A command with its positionals and options. */
export interface CommandSpec {
  description: string;
  arguments: readonly ArgumentSpec[];
  options: readonly OptionSpec[];
}

/**
 * An option from its flags as help shows them, e.g. `-w, --working-dir <dir>`.
 *
 * @example
 * ```ts
 * const MODEL = option("-m, --model <model>", "model id");
 * const RESUME = option("-r, --resume [id]", "session ID; none: pick one");
 * ```
 */
export function option(
  flags: string,
  description: string,
  more: Omit<Partial<OptionSpec>, "long" | "short" | "value"> = {},
): OptionSpec {
  const match = /^(?:-(\w), )?--([\w-]+)(?: (?:<(\w+)>|\[(\w+)\]))?$/.exec(flags);
  if (!match) throw new Error(`option flags must read "-x, --long <value>": ${flags}`);
  const [, short, long, required, optional] = match;
  const value = required ?? optional;
  return {
    long,
    ...(short && { short }),
    ...(value && { value }),
    ...(optional && { optional: true }),
    description,
    ...more,
  };
}

/** `-w/--working-dir`: the workspace. */
export const WORKING_DIR = option(
  "-w, --working-dir <dir>",
  "workspace root (default: current directory)",
);

/** `--sandbox`: where the shell (and the tools that touch the system) run. */
export const SANDBOX = option("--sandbox <mode>", "run bash inside a sandbox", {
  choices: SANDBOX_MODES,
});

/** `--deadline`: how long a tool call may run. */
export const DEADLINE = option(
  "--deadline <spec>",
  "seconds a tool call may run: SECONDS, or TOOL=SECONDS,... (default 300; bash: " +
    "its timeout + 60)",
);

/** `--max-line-bytes`: the longest input line a line-based server accepts. */
export const MAX_LINE_BYTES = option(
  "--max-line-bytes <n>",
  "longest input line accepted, in bytes (default 268435456 = 256 MiB)",
);

/** Where nobody can be asked, an ask rule's or hook's call runs instead of being refused. */
export const APPROVE_ASKS = option(
  "--approve-asks",
  "nobody can be asked here: run the calls an ask rule or a hook's ask is about, unasked " +
    "(without it they are refused)",
);

/**
 * The hard budget caps (agent/budget.ts): reaching one ends the run with exit code 3. The flags
 * win over the config's `budget`; values are checked when the session opens.
 */
export const BUDGET_OPTIONS: readonly OptionSpec[] = [
  option("--max-cost-usd <usd>", "stop at this spend in US dollars (by the model's price)"),
  option("--max-tokens <n>", "stop once the model has used this many tokens (in and out)"),
  option("--max-wall-time <seconds>", "stop once the agent has worked this long"),
];

/** `--budget-ledger`: the batch-wide budget a batch task's `deft run` charges (set by batch). */
export const BUDGET_LEDGER = option(
  "--budget-ledger <file>",
  "charge and check a batch's shared budget ledger (deft batch sets it)",
);

/** The commands that have a fast path. */
export const PIPELINE_COMMANDS = {
  tools: {
    description: "list the tools; --json prints their definitions as sent to a provider",
    arguments: [],
    options: [
      {
        long: "provider",
        value: "provider",
        description: "render schemas for this provider",
        default: "openai",
      },
      { long: "json", description: "print definitions as JSON" },
      {
        long: "config-file",
        value: "file",
        description: "config whose allowed MCP servers are listed too (default: the usual search)",
      },
    ],
  },
  tool: {
    description: "run one tool call; ARGS is a JSON object, or read from stdin",
    arguments: [
      { name: "name", required: true, description: "tool name (case and underscores ignored)" },
      { name: "args", required: false, description: "arguments as a JSON object" },
    ],
    options: [WORKING_DIR, SANDBOX, DEADLINE],
  },
  serve: {
    description: "tool calls as NDJSON on stdin, results as NDJSON on stdout",
    arguments: [],
    options: [
      WORKING_DIR,
      {
        long: "parallel",
        description:
          "run calls at once: each line, and the calls of a batch; answer as they finish",
      },
      SANDBOX,
      DEADLINE,
      MAX_LINE_BYTES,
      APPROVE_ASKS,
    ],
  },
} satisfies Record<string, CommandSpec>;

/** The key commander and the fast path use for an option: `working-dir` → `workingDir`. */
export function optionKey(long: string): string {
  return long.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** `deft run` / `deft interactive`: Deft's tools inside a container (src/container). */
export const CONTAINER_OPTIONS: readonly OptionSpec[] = [
  option(
    "--docker-image <image>",
    "run the tools in a new container of this image (never pulled); -w is a folder inside " +
      "(default: the image's WORKDIR)",
  ),
  option(
    "--docker-container-id <id>",
    "run the tools in this running container (never removed); Deft's runtime must be inside",
  ),
  option(
    "--dockerfile-path <file>",
    "build an image from this Dockerfile (its folder is the build context), then run the " +
      "tools in a new container of it; the image is removed at the end",
  ),
  option(
    "--docker-image-file <tar>",
    "load the image from this archive (docker save / podman save), then run the tools in a " +
      "new container of it",
  ),
  option(
    "--docker-keep",
    "keep the container Deft started (and an image it built), and print its id",
  ),
  option(
    "--container-runtime <runtime>",
    "docker or podman (default: docker when its daemon answers, else podman)",
    { choices: ["docker", "podman"] },
  ),
];

/**
 * `deft batch`: tasks with an image, SWE-bench dataset lines and their predictions. A line's
 * image is its own `image`/`dockerfile`, else `--image-template`'s, else the default image.
 */
export const BATCH_CONTAINER_OPTIONS: readonly OptionSpec[] = [
  option(
    "--docker-image <image>",
    "the default image: every line that names none (no image, dockerfile or --image-template " +
      "image) runs in a new container of it, on the repository inside (repo not needed)",
  ),
  option(
    "--dockerfile-path <file>",
    "build the default image once at the start (its folder is the build context); removed at " +
      "the end unless --docker-keep (with --slurm: each array task builds on its node)",
  ),
  option(
    "--docker-image-file <tar>",
    "load the default image once at the start; removed at the end if it was new, unless " +
      "--docker-keep (with --slurm: each array task loads on its node)",
  ),
  option(
    "--docker-keep",
    "keep each task's container (its id goes in result.json and is printed at the end)",
  ),
  option(
    "--docker-container-id <id>",
    "not for a batch (it starts one container per task): refused; name an image instead",
  ),
  option(
    "--image-template <template>",
    "the image of a SWE-bench line: {id}, {id_lower} or {swebench_id} filled in from its " +
      "instance_id (`swebench`: swebench/sweb.eval.x86_64.{swebench_id}:latest); a line's " +
      "image wins",
  ),
  option(
    "--model-name-or-path <name>",
    "model_name_or_path in predictions.jsonl (default: the model id)",
  ),
  option(
    "--container-runtime <runtime>",
    "docker or podman for the tasks with an image (default: docker when its daemon answers, " +
      "else podman)",
    { choices: ["docker", "podman"] },
  ),
];

/** The same option with the help text this command gives it. */
export function described(spec: OptionSpec, description: string): OptionSpec {
  return { ...spec, description };
}

// The options the launch line shares with other commands (program.ts), declared once.
export const MODEL = option("-m, --model <model>", "model id");
export const MODEL_BASE_URL = option("--model-base-url <url>", "base URL of the provider's API");
export const API_KEY = option("-k, --api-key <key>", "API key (default: <PROVIDER>_API_KEY)");
export const CONFIG_FILE = option(
  "--config-file <file>",
  "config file (default: DEFT_CONFIG, ./deft.yaml, ...)",
);
export const MAX_STEPS = option("--max-steps <n>", "step limit", { integer: "positive" });
export const PARALLEL_SUBAGENTS = option(
  "--parallel-subagents <n>",
  "child agents of the Task tool running at once (default 2)",
  { integer: "positive" },
);
export const REPOSITORY = described(
  WORKING_DIR,
  "the repository to work in (default: current directory)",
);
export const OUTPUT_FORMAT = option(
  "--output-format <format>",
  "text, json (a summary) or stream-json (events)",
  { choices: OUTPUT_FORMATS },
);
export const COLOR = option("--color <when>", "colour the console", { choices: COLOR_MODES });
export const NO_INSTRUCTIONS = option("--no-project-instructions", "do not read AGENTS.md files");
export const PROVIDER = option(
  "-p, --provider <provider>",
  "model provider (a name under model_providers, or a kind)",
);
/** The model and where its settings come from: `run`, `interactive` and `config`. */
export const MODEL_OPTIONS: readonly OptionSpec[] = [
  PROVIDER,
  MODEL,
  MODEL_BASE_URL,
  API_KEY,
  CONFIG_FILE,
];
export const JSON_OUTPUT = option(
  "--json",
  "print a JSON summary on stdout (--output-format json)",
);
export const APPROVAL_RULES = option(
  "--approval-rules <file>",
  "a policy file of approval rules (allow/ask/deny lists; see deft approvals)",
);

/** `--approval`, with the mode a command uses when neither the flag nor the config sets one. */
export function approval(defaultMode: string): OptionSpec {
  return option(
    "--approval <mode>",
    `ask before tool calls: never, commands (bash, except read-only ones) or all (also edits); ` +
      `default: config approval, else ${defaultMode}`,
    { choices: APPROVAL_MODES },
  );
}

// The options `run` shares with `interactive` (program.ts gives `run` the rest of its own).
export const TRAJECTORY_FILE = option(
  "-t, --trajectory-file <file>",
  "where to record the run",
);
export const CONTINUE = option(
  "-c, --continue",
  "go on with this workspace's latest conversation (never a /init helper)",
);
export const IMAGE = option(
  "--image <file>",
  "send the image FILE with the (first) prompt (repeatable)",
  { repeatable: true },
);

/** What `deft interactive` and `deft resume` take besides the model options. */
export const INTERACTIVE_OPTIONS: readonly OptionSpec[] = [
  described(MAX_STEPS, "step limit per turn"),
  PARALLEL_SUBAGENTS,
  IMAGE,
  REPOSITORY,
  described(TRAJECTORY_FILE, "record conversation N to FILE.N.json"),
  COLOR,
  SANDBOX,
  approval("commands"),
  APPROVAL_RULES,
  NO_INSTRUCTIONS,
  ...BUDGET_OPTIONS,
  ...CONTAINER_OPTIONS,
];

/**
 * `deft [options] [prompt]`: the launch line other agents' users type (`claude -c`, `claude -p`,
 * `codex -C DIR`). Only before a command (positional options): `deft run -p X` keeps `-p` for
 * the provider there. Commander's own `-V, --version` comes before these and `-h, --help` after.
 */
export const LAUNCH: CommandSpec = {
  description: "A coding agent's hands: tools, an agent loop and MCP, in one executable.",
  arguments: [
    {
      name: "prompt",
      required: false,
      variadic: true,
      description: 'open a conversation with this first prompt (words: deft "fix the bug"); ' +
        "with -p, the task run headless",
    },
  ],
  options: [
    option("-c, --continue", "go on with the latest conversation (never a /init helper)"),
    option("-p, --print", "run the prompt headless, as deft run (the task may come on stdin)"),
    option("-C, --cd <dir>", "the workspace, as -w (codex's spelling)"),
    REPOSITORY,
    option("--provider <provider>", "model provider (a name under model_providers, or a kind)"),
    MODEL,
    MODEL_BASE_URL,
    API_KEY,
    CONFIG_FILE,
    MAX_STEPS,
    described(OUTPUT_FORMAT, "with -p: text, json (a summary) or stream-json (events)"),
    COLOR,
    SANDBOX,
    approval("commands (never with -p)"),
    APPROVAL_RULES,
    described(
      APPROVE_ASKS,
      "with -p: run the calls an ask rule or a hook's ask is about, " +
        "unasked (without it they are refused)",
    ),
    NO_INSTRUCTIONS,
    ...BUDGET_OPTIONS,
    option("-r, --resume [id]", "go on with session ID (none: pick one from a list)"),
  ],
};

/** A command as the top-level help lists it: the one place its summary and arguments are written. */
export interface CommandEntry {
  description: string;
  /** Another name for it (`exec` for `run`). */
  alias?: string;
  arguments: readonly ArgumentSpec[];
  /** Whether it takes options (help shows `[options]`); program.ts declares them. */
  options: boolean;
}

const SESSION_ARGUMENT: ArgumentSpec = {
  name: "session",
  required: false,
  description: "the session id or trajectory file (default: the latest)",
};

/**
 * Every command, in the order `deft --help` lists them. program.ts builds each command from its
 * entry here, and `deft --help` is written from this table without building them (help.ts), so a
 * summary is written once.
 */
export const COMMANDS = {
  tools: pipelineEntry("tools"),
  tool: pipelineEntry("tool"),
  serve: pipelineEntry("serve"),
  run: {
    description: "run the agent on a task until it calls task_done or answers in words",
    alias: "exec",
    arguments: [{
      name: "task",
      required: false,
      description: "the task, in words (none: read from stdin when something is piped in)",
    }],
    options: true,
  },
  interactive: {
    description: "a conversation at a prompt: history, slash commands, approvals; tools persist " +
      '(also bare `deft` on a terminal, and `deft "PROMPT"`)',
    arguments: [{ name: "prompt", required: false, description: "the first prompt, sent at once" }],
    options: true,
  },
  resume: {
    description: "go on with an earlier conversation: session ID, or pick one from a list",
    arguments: [{
      name: "id",
      required: false,
      description: "the session (deft sessions lists them; none: pick on the terminal)",
    }],
    options: true,
  },
  acp: {
    description: "serve the Agent Client Protocol on stdio, for editors (Zed, JetBrains, ...)",
    arguments: [],
    options: true,
  },
  sessions: {
    description: "recent sessions of a workspace (ids for --resume), newest first",
    arguments: [
      {
        name: "action",
        required: false,
        description: "rm: remove the sessions named, with their checkpoints",
      },
      { name: "ids", required: false, variadic: true, description: "the sessions to remove" },
    ],
    options: true,
  },
  checkpoints: {
    description: "a session's checkpoints, one per turn, numbered for deft rewind --to",
    arguments: [SESSION_ARGUMENT, {
      name: "rm-session",
      required: false,
      description: "after `rm`: the session whose checkpoints are deleted",
    }],
    options: true,
  },
  rewind: {
    description: "go back to a checkpoint: the files, the conversation, or both",
    arguments: [SESSION_ARGUMENT],
    options: true,
  },
  report: {
    description: "one self-contained HTML page of a run, a batch, or two batches compared",
    arguments: [{
      name: "path",
      required: true,
      variadic: true,
      description: "trajectory files, session ids, or batch output folders",
    }],
    options: true,
  },
  config: {
    description: "print the resolved configuration, keys masked",
    arguments: [],
    options: true,
  },
  approvals: {
    description: "the approval rules in force here, and where each was set; remove one",
    arguments: [
      {
        name: "action",
        required: false,
        description: "remove: take rule N away (as numbered in the list)",
      },
      { name: "n", required: false, description: "the rule's number" },
    ],
    options: true,
  },
  trust: {
    description: "let a folder's own config file (deft.yaml) set every key, or --revoke that",
    arguments: [{
      name: "dir",
      required: false,
      description: "the folder (default: the current one)",
    }],
    options: true,
  },
  hooks: {
    description: "list the hooks in force and the config file each came from",
    arguments: [],
    options: true,
  },
  ckg: {
    description:
      "the code knowledge graph: index a codebase, find functions, classes and methods by name",
    arguments: [],
    options: false,
  },
  batch: {
    description:
      "run many tasks (JSON Lines), each in its own checkout: locally, on Slurm, or as a k8s Job; " +
      "`deft batch status DIR` summarises a batch",
    arguments: [
      {
        name: "tasks",
        required: true,
        description: "the task file (one JSON object per line), or `status`",
      },
      { name: "dir", required: false, description: "with `status`: the batch's output directory" },
    ],
    options: true,
  },
  mcp: {
    description: "MCP server over stdio exposing the tools (state lasts for the connection)",
    arguments: [],
    options: true,
  },
} satisfies Record<string, CommandEntry>;

/** A pipeline command's entry: its summary and arguments are in `PIPELINE_COMMANDS`. */
function pipelineEntry(name: keyof typeof PIPELINE_COMMANDS): CommandEntry {
  const spec: CommandSpec = PIPELINE_COMMANDS[name];
  return {
    description: spec.description,
    arguments: spec.arguments,
    options: spec.options.length > 0,
  };
}

/** An argument as commander and help write it: `<name>`, `[name]`, `<name...>`. */
export function argumentTerm(arg: ArgumentSpec): string {
  const name = `${arg.name}${arg.variadic ? "..." : ""}`;
  return arg.required ? `<${name}>` : `[${name}]`;
}

/** An option's flags as commander and help write them: `-w, --working-dir <dir>`. */
export function optionFlags(o: OptionSpec): string {
  const value = o.value ? (o.optional ? ` [${o.value}]` : ` <${o.value}>`) : "";
  return `${o.short ? `-${o.short}, ` : ""}--${o.long}${value}`;
}

/**
 * The commands whose plain command line fast.ts parses without commander: the pipeline commands,
 * `deft sessions` and `deft config`, which read files and print, and `deft interactive` (their
 * summaries are in `COMMANDS`; program.ts builds their commander commands from these same
 * options).
 */
export const FAST_COMMANDS = {
  ...PIPELINE_COMMANDS,
  sessions: {
    arguments: [],
    options: [
      described(WORKING_DIR, "the workspace (default: current directory)"),
      option("-n, --limit <n>", "how many to list (default 20)", { integer: "positive" }),
      described(JSON_OUTPUT, "print the sessions as JSON"),
    ],
  },
  config: { arguments: [], options: MODEL_OPTIONS },
  // The conversation: its start is what a user waits for most (issue 51).
  interactive: {
    arguments: COMMANDS.interactive.arguments,
    options: [
      ...MODEL_OPTIONS,
      ...INTERACTIVE_OPTIONS,
      CONTINUE,
      option("-r, --resume [id]", "go on with session ID (no ID: pick one from a list)"),
    ],
  },
} satisfies Record<string, Omit<CommandSpec, "description">>;
