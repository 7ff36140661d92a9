/**
 * The full command line, built with commander: help for every command, usage errors, and the
 * commands that have no fast path. Usage errors exit with code 2.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { VERSION } from "../version.ts";
import { runPipelineCommand } from "./dispatch.ts";
import type { FastParse } from "./fast.ts";
import type { RunOptions } from "./run.ts";
import type { InteractiveOptions } from "./interactive.ts";
import {
  approval,
  APPROVAL_RULES,
  APPROVE_ASKS,
  argumentTerm,
  BUDGET_LEDGER,
  BUDGET_OPTIONS,
  COLOR,
  type CommandEntry,
  COMMANDS,
  CONFIG_FILE,
  CONTINUE,
  DEADLINE,
  described,
  FAST_COMMANDS,
  IMAGE,
  INTERACTIVE_OPTIONS,
  JSON_OUTPUT,
  LAUNCH,
  MAX_LINE_BYTES,
  MAX_STEPS,
  MODEL,
  MODEL_BASE_URL,
  MODEL_OPTIONS,
  NO_INSTRUCTIONS,
  option,
  optionFlags,
  type OptionSpec,
  OUTPUT_FORMAT,
  PARALLEL_SUBAGENTS,
  PIPELINE_COMMANDS,
  PROVIDER,
  REPOSITORY,
  SANDBOX,
  TRAJECTORY_FILE,
  WORKING_DIR,
} from "./spec.ts";
import { BATCH_CONTAINER_OPTIONS, CONTAINER_OPTIONS } from "./spec.ts";
import { DEFINITION_SEARCHES, EDGE_SEARCHES, INDIRECT, searchOptionSpecs } from "./ckg.ts";

/**
 * The command `name` of `program`, with its summary, alias and arguments from its entry in
 * spec.ts's `COMMANDS` (the table `deft --help` is written from); its options are added here.
 */
function declared(program: Command, name: keyof typeof COMMANDS): Command {
  const entry: CommandEntry = COMMANDS[name];
  const command = program.command(name).description(entry.description);
  if (entry.alias) command.alias(entry.alias);
  for (const arg of entry.arguments) {
    command.addArgument(new Argument(argumentTerm(arg), arg.description));
  }
  return command;
}

/** Adds `specs` to `command`, in order. */
function addOptions(command: Command, specs: readonly OptionSpec[]): Command {
  for (const o of specs) {
    const option = new Option(optionFlags(o), o.description);
    if (o.choices) option.choices(o.choices);
    if (o.integer) {
      option.argParser(o.integer === "positive" ? positiveInteger : nonNegativeInteger);
    }
    if (o.repeatable) option.argParser(collect).default([]);
    if (o.default !== undefined) option.default(o.default);
    command.addOption(option);
  }
  return command;
}

/** The options `deft [options] [prompt]` was given. */
interface LaunchOptions extends Record<string, unknown> {
  continue?: boolean;
  resume?: string | boolean;
  print?: boolean;
  cd?: string;
  workingDir?: string;
}

/**
 * The launch line: `-p` runs the prompt as `deft run` does (its words may come unquoted),
 * anything else opens the conversation. Without `-p`, more than one argument, or a lone word
 * (unless with `-c`/`-r`), is taken for a mistyped command (commander's own error, with its
 * suggestion): a prompt is words, quoted as one argument. `-p PROVIDER …` (the run command's
 * spelling) is refused with the fix (print_provider.ts).
 */
async function launch(
  program: Command,
  words: string[],
  given: LaunchOptions,
): Promise<number> {
  const { cd, print, ...opts } = given;
  if (cd !== undefined && opts.workingDir !== undefined && cd !== opts.workingDir) {
    const { UsageError } = await import("./io.ts");
    throw new UsageError(`-C ${cd} and -w ${opts.workingDir} name two workspaces: give one.`);
  }
  const workingDir = opts.workingDir ?? cd;
  const prompt = words.length > 0 ? words.join(" ") : undefined;
  // With -c or -r the line is surely a conversation: one word is its first prompt.
  const resuming = opts.continue || opts.resume !== undefined;
  const word = prompt !== undefined && !/\S\s+\S/.test(prompt) && !resuming;
  if (!print && (words.length > 1 || word)) {
    // commander's "unknown command 'X'" with its "did you mean"; it reads program.args.
    (program as unknown as { unknownCommand(): never }).unknownCommand();
  }
  if (print) {
    if (opts.resume === true) {
      const { UsageError } = await import("./io.ts");
      throw new UsageError(
        "-p cannot pick a session from a list: give its id (-r ID; deft sessions lists " +
          "them), or -c for the latest conversation.",
      );
    }
    const { refuseProviderAsTask } = await import("./print_provider.ts");
    const typed = (program as unknown as { rawArgs: string[] }).rawArgs;
    await refuseProviderAsTask(typed, opts.configFile as string | undefined);
    const { runCommand } = await import("./run.ts");
    return await runCommand(prompt, { ...opts, workingDir } as RunOptions);
  }
  const { interactiveCommand } = await import("./interactive.ts");
  return await interactiveCommand({ ...opts, workingDir, prompt } as InteractiveOptions);
}

function buildProgram(setExit: (code: number) => void): Command {
  // The launch line (spec.ts's LAUNCH): `deft --help` is also written from it, by help.ts.
  const program = new Command("deft")
    .description(LAUNCH.description)
    .version(VERSION)
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)")
    .enablePositionalOptions();
  for (const arg of LAUNCH.arguments) program.argument(argumentTerm(arg), arg.description);
  addOptions(program, LAUNCH.options)
    .action(async (prompt, opts) => {
      setExit(await launch(program, prompt, opts));
    });

  addPipelineCommands(program, setExit);
  addAgentCommands(program, setExit);
  addSessionCommands(program, setExit);
  addSettingsCommands(program, setExit);
  addCkgCommands(program, setExit);
  addBatchAndMcp(program, setExit);
  return program;
}

/** `tool`, `tools`, `serve`: their options are in spec.ts, which their fast path reads too. */
function addPipelineCommands(program: Command, setExit: (code: number) => void): void {
  for (const [name, spec] of Object.entries(PIPELINE_COMMANDS)) {
    addOptions(declared(program, name as keyof typeof PIPELINE_COMMANDS), spec.options).action(
      async (...params: unknown[]) => {
        const options = params[spec.arguments.length] as FastParse["options"];
        const positionals = params.slice(0, spec.arguments.length) as (string | undefined)[];
        const command = name as FastParse["command"];
        setExit(await runPipelineCommand({ command, positionals, options }));
      },
    );
  }
}

/** The commands that run the agent: `run`, `interactive`, `resume`, `acp`. */
function addAgentCommands(program: Command, setExit: (code: number) => void): void {
  addOptions(
    declared(program, "run"),
    [
      option("-f, --file <file>", "read the task from a file (`-f -`: from stdin)"),
      IMAGE,
      ...MODEL_OPTIONS,
      MAX_STEPS,
      PARALLEL_SUBAGENTS,
      REPOSITORY,
      option(
        "--must-patch",
        "refuse to finish while git diff is empty (a reply without a tool call is nudged on)",
      ),
      option("--patch-path <file>", "write the final patch (git diff, new files included) here"),
      TRAJECTORY_FILE,
      JSON_OUTPUT,
      OUTPUT_FORMAT,
      COLOR,
      option(
        "--replay <trajectory>",
        "replay a recorded run's model responses; report differences",
      ),
      option("--replay-exact", "compare replayed tool output byte for byte (no normalising)"),
      SANDBOX,
      approval("never"),
      APPROVAL_RULES,
      APPROVE_ASKS,
      CONTINUE,
      option("-r, --resume <id>", "go on with the session ID (or a trajectory FILE)"),
      option(
        "--rewind-to <n>",
        "with --continue/--resume: first go back to checkpoint N (files and conversation)",
        { integer: "non-negative" },
      ),
      NO_INSTRUCTIONS,
      ...BUDGET_OPTIONS,
      BUDGET_LEDGER,
      ...CONTAINER_OPTIONS,
    ],
  ).action(async (task, opts) => {
    const { runCommand } = await import("./run.ts");
    setExit(await runCommand(task, opts));
  });

  // Its options are in spec.ts: a plain `deft interactive` line is parsed there, without
  // commander.
  addOptions(declared(program, "interactive"), FAST_COMMANDS.interactive.options)
    .action(async (prompt, opts) => {
      const { interactiveCommand } = await import("./interactive.ts");
      setExit(await interactiveCommand({ ...opts, prompt }));
    });

  addOptions(
    declared(program, "resume"),
    [...MODEL_OPTIONS, ...INTERACTIVE_OPTIONS],
  ).action(async (id, opts) => {
    const { interactiveCommand } = await import("./interactive.ts");
    setExit(await interactiveCommand({ ...opts, resume: id ?? true }));
  });

  addOptions(
    declared(program, "acp"),
    [
      ...MODEL_OPTIONS,
      described(MAX_STEPS, "step limit per turn"),
      PARALLEL_SUBAGENTS,
      described(WORKING_DIR, "the workspace (default: each session's cwd)"),
      SANDBOX,
      approval("commands"),
      APPROVAL_RULES,
      NO_INSTRUCTIONS,
      ...BUDGET_OPTIONS,
      ...CONTAINER_OPTIONS,
    ],
  ).action(async (opts) => {
    const { acpCommand } = await import("./acp.ts");
    setExit(await acpCommand(opts));
  });
}

/** What sessions left: `sessions`, `checkpoints`, `rewind`, `report`. */
function addSessionCommands(program: Command, setExit: (code: number) => void): void {
  // Its options are in spec.ts: a plain `deft sessions` line is parsed there, without commander;
  // `deft sessions rm ID…` comes here.
  addOptions(declared(program, "sessions"), FAST_COMMANDS.sessions.options).action(
    async (action, ids, opts) => {
      const { sessionsCommand, sessionsRemoveCommand } = await import("./sessions.ts");
      setExit(
        action === undefined
          ? await sessionsCommand(opts)
          : await sessionsRemoveCommand(action, ids, opts),
      );
    },
  );

  addOptions(
    declared(program, "checkpoints"),
    [
      described(WORKING_DIR, "the workspace (default: current directory)"),
      described(JSON_OUTPUT, "print the checkpoints as JSON"),
      option("--prune", "remove the checkpoints of sessions that no longer exist"),
    ],
  ).action(async (session, more, opts) => {
    const { checkpointsCommand } = await import("./checkpoints.ts");
    setExit(await checkpointsCommand(session, opts, more));
  });

  addOptions(
    declared(program, "rewind"),
    [
      described(WORKING_DIR, "the workspace (default: current directory)"),
      option(
        "--to <n>",
        "the checkpoint to go back to (deft checkpoints lists them; 0: the start)",
        {
          integer: "non-negative",
        },
      ),
      option("--files", "restore the files only"),
      option("--conversation", "cut the conversation only"),
      option("--both", "restore both (the default)"),
      option("--force", "overwrite files changed outside Deft since the last checkpoint"),
      described(JSON_OUTPUT, "print what was done as JSON"),
    ],
  ).action(async (session, opts) => {
    const { rewindCommand } = await import("./rewind.ts");
    setExit(await rewindCommand(session, opts));
  });

  declared(program, "report")
    .option("-o, --output <file>", "where to write the page (default: deft-report.html)")
    .action(async (paths, opts) => {
      const { reportCommand } = await import("./report.ts");
      setExit(await reportCommand(paths, opts));
    });
}

/** What is in force: `config`, `approvals`, `trust`, `hooks`. */
function addSettingsCommands(program: Command, setExit: (code: number) => void): void {
  // Its options are in spec.ts: a plain `deft config` line is parsed there, without commander.
  addOptions(declared(program, "config"), FAST_COMMANDS.config.options).action(async (opts) => {
    const { configCommand } = await import("./config.ts");
    setExit(await configCommand(opts));
  });

  declared(program, "approvals")
    .option("--config-file <file>", "the config file (as for deft run)")
    .option("--approval-rules <file>", "also list the rules of this policy file")
    .action(async (action, n, opts) => {
      const { approvalsCommand } = await import("./approvals.ts");
      setExit(await approvalsCommand(action, n, opts));
    });

  declared(program, "trust")
    .option("--revoke", "stop trusting the folder")
    .option("--list", "print the trusted folders")
    .action(async (dir, opts) => {
      const { trustCommand } = await import("./trust.ts");
      setExit(await trustCommand(dir, opts));
    });

  const hooks = declared(program, "hooks")
    .option("--config-file <file>", "the config file to read")
    .action(async (opts) => {
      const { hooksList } = await import("./hooks.ts");
      setExit(await hooksList(opts));
    });
  hooks.command("import")
    .description(
      "print a Claude Code settings file's hooks and permissions as Deft's config (YAML)",
    )
    .argument("<file>", "the settings file (.claude/settings.json)")
    .action(async (file) => {
      const { hooksImport } = await import("./hooks.ts");
      setExit(await hooksImport(file));
    });
}

/** `ckg index` and the code graph's searches. */
function addCkgCommands(program: Command, setExit: (code: number) => void): void {
  const ckg = declared(program, "ckg");
  addOptions(
    ckg.command("index")
      .description("index DIR (default: the workspace); later searches refresh incrementally")
      .argument("[dir]", "the codebase to index"),
    [WORKING_DIR],
  ).action(async (dir, opts) => {
    const { ckgIndex } = await import("./ckg.ts");
    setExit(await ckgIndex(dir, { workspace: await workspaceOf(opts) }));
  });
  for (const [name, kind] of Object.entries(DEFINITION_SEARCHES)) {
    addOptions(
      ckg.command(name)
        .description(`find ${kind.replace("-", " ")}s named NAME (exact; close names on a miss)`)
        .argument("<name>", "the identifier; Cls.method also works for methods"),
      searchOptionSpecs("match"),
    ).action(async (identifier, opts) => {
      const { ckgSearch } = await import("./ckg.ts");
      const workspace = await workspaceOf(opts);
      setExit(await ckgSearch(kind, identifier, { ...opts, workspace }));
    });
  }
  for (const [name, description] of Object.entries(EDGE_SEARCHES)) {
    addOptions(
      ckg.command(name).description(description).argument("<name>", "the identifier (exact)"),
      [
        ...searchOptionSpecs("function or class"),
        ...(name === "search-subclasses" ? [INDIRECT] : []),
      ],
    ).action(async (identifier, opts) => {
      const { ckgEdgeSearch } = await import("./ckg.ts");
      const workspace = await workspaceOf(opts);
      setExit(
        await ckgEdgeSearch(name as keyof typeof EDGE_SEARCHES, identifier, { ...opts, workspace }),
      );
    });
  }
}

/** `batch` (many tasks) and `mcp` (the tools as an MCP server). */
function addBatchAndMcp(program: Command, setExit: (code: number) => void): void {
  const batch = declared(program, "batch");
  addOptions(batch, [
    option("--out <dir>", "where each task's checkout, trajectory, patch and result go"),
    option("--concurrency <n>", "tasks at once (with --slurm: array tasks at once)", {
      integer: "positive",
    }),
    option("--timeout <seconds>", "time limit per task (default 1800; a task's own wins)", {
      integer: "positive",
    }),
    option("--retry-failed", "run failed tasks again (finished ones are always skipped)"),
    option("--index <i>", "run only task I (0-based), as each array task does", {
      integer: "non-negative",
    }),
    option("--slurm", "submit a Slurm job array instead of running here"),
    option("--wait", "with --slurm: follow the array until it ends"),
    option("--slurm-arg <arg>", "pass ARG to sbatch (repeatable)", { repeatable: true }),
    option("--emit <format>", "print a manifest instead of running (k8s: an Indexed Job)"),
    { ...OUTPUT_FORMAT, description: "summary format", choices: ["text", "json"] },
    described(PROVIDER, "model provider for every task"),
    described(MODEL, "model id for every task"),
    MODEL_BASE_URL,
    described(CONFIG_FILE, "config file for every task"),
    described(MAX_STEPS, "step limit per task (a task's own wins)"),
    SANDBOX,
    described(APPROVAL_RULES, "a policy file of approval rules for every task (deny rules)"),
    described(
      APPROVE_ASKS,
      "each task runs the calls an ask rule or a hook's ask is about, " +
        "unasked (without it they are refused)",
    ),
    ...BUDGET_OPTIONS.map((o) => described(o, `${o.description}: across the whole batch`)),
    ...BATCH_CONTAINER_OPTIONS,
  ]).action(async (tasks, dir, opts) => {
    const { batchCommand } = await import("./batch.ts");
    setExit(await batchCommand(tasks, dir, opts));
  });

  addOptions(
    declared(program, "mcp"),
    [WORKING_DIR, SANDBOX, DEADLINE, MAX_LINE_BYTES, APPROVE_ASKS],
  ).action(async (opts) => {
    const { mcpCommand } = await import("./mcp.ts");
    setExit(await mcpCommand(opts));
  });
}

async function workspaceOf(opts: { workingDir?: string }): Promise<string> {
  const { workspaceOf } = await import("./workspace_arg.ts");
  return await workspaceOf(opts.workingDir);
}

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer.");
  return n;
}

function nonNegativeInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError("expected an integer ≥ 0.");
  }
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * Commander's own top-level help, `width` columns wide (default 80): what `deft --help` would
 * print through commander. tests/cli/help_test.ts holds help.ts's text to it.
 */
export function commanderHelp(width?: number): string {
  const program = buildProgram(() => {});
  program.configureOutput({ getOutHelpWidth: () => width ?? 80, getOutHasColors: () => false });
  return program.helpInformation();
}

/**
 * What commander makes of `args` (the command's name and options) without running the command:
 * tests hold the fast path's parse (fast.ts) to it.
 */
export async function commanderParse(
  args: readonly string[],
): Promise<{ command: string; options: Record<string, unknown> }> {
  const program = buildProgram(() => {});
  const stop = new Error("parsed");
  let seen: { command: string; options: Record<string, unknown> } | undefined;
  program.hook("preAction", (_, action) => {
    seen = { command: action.name(), options: action.opts() };
    throw stop;
  });
  try {
    await program.parseAsync(args, { from: "user" });
  } catch (e) {
    if (e !== stop) throw e;
  }
  if (!seen) throw new Error(`commander ran no command for: ${args.join(" ")}`);
  return seen;
}

/** Parses `args` with commander and runs the command; returns the exit code. */
export async function runProgram(given: readonly string[]): Promise<number> {
  const args = given;
  let code = 0;
  const program = buildProgram((c) => code = c);
  // On a terminal, bare `deft` is the conversation; in a script it is a usage error.
  if (args.length === 0 && !(Deno.stdin.isTerminal() && Deno.stderr.isTerminal())) {
    program.outputHelp({ error: true });
    return 2;
  }
  try {
    await program.parseAsync(args, { from: "user" });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return 0;
      const { reportUsageErrorAsJson } = await import("./json_errors.ts");
      await reportUsageErrorAsJson(args, e.message.replace(/^error: /, ""));
      return 2;
    }
    throw e;
  }
}
