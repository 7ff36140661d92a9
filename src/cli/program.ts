/**
 * The full command line, built with commander: help for every command, usage errors, and the
 * commands that have no fast path. Usage errors exit with code 2.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { VERSION } from "../version.ts";
import { runPipelineCommand } from "./dispatch.ts";
import type { FastParse } from "./fast.ts";
import { type CommandSpec, PIPELINE_COMMANDS } from "./spec.ts";
import { OUTPUT_FORMATS } from "./console/choose.ts";
import { COLOR_MODES } from "./console/style.ts";

function addSpec(program: Command, name: string, spec: CommandSpec): Command {
  const command = program.command(name).description(spec.description);
  for (const arg of spec.arguments) {
    command.addArgument(
      new Argument(arg.required ? `<${arg.name}>` : `[${arg.name}]`, arg.description),
    );
  }
  for (const o of spec.options) {
    const flags = `${o.short ? `-${o.short}, ` : ""}--${o.long}${o.value ? ` <${o.value}>` : ""}`;
    const option = new Option(flags, o.description);
    if (o.choices) option.choices(o.choices);
    if (o.default !== undefined) option.default(o.default);
    command.addOption(option);
  }
  return command;
}

function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command("deft")
    .description("A coding agent's hands: tools, an agent loop and MCP, in one executable.")
    .version(VERSION)
    .exitOverride()
    .showHelpAfterError("(run with --help for usage)");

  for (const [name, spec] of Object.entries(PIPELINE_COMMANDS)) {
    addSpec(program, name, spec).action(async (...params: unknown[]) => {
      const options = params[spec.arguments.length] as FastParse["options"];
      const positionals = params.slice(0, spec.arguments.length) as (string | undefined)[];
      const command = name as FastParse["command"];
      setExit(await runPipelineCommand({ command, positionals, options }));
    });
  }

  const modelOptions = (command: Command) =>
    command
      .option(
        "-p, --provider <provider>",
        "model provider (a name under model_providers, or a kind)",
      )
      .option("-m, --model <model>", "model id")
      .option("--model-base-url <url>", "base URL of the provider's API")
      .option("-k, --api-key <key>", "API key (default: <PROVIDER>_API_KEY)")
      .option("--config-file <file>", "config file (default: DEFT_CONFIG, ./deft.yaml, ...)");

  modelOptions(
    program.command("run")
      .description("run the agent on a task until it calls task_done")
      .argument("[task]", "the task, in words")
      .option("-f, --file <file>", "read the task from a file"),
  )
    .option("--max-steps <n>", "step limit", positiveInteger)
    .option("-w, --working-dir <dir>", "the repository to work in (default: current directory)")
    .option("--must-patch", "refuse to finish while git diff is empty")
    .option("--patch-path <file>", "write the final patch (git diff, new files included) here")
    .option("-t, --trajectory-file <file>", "where to record the run")
    .option("--json", "print a JSON summary on stdout (--output-format json)")
    .addOption(
      new Option("--output-format <format>", "text, json (a summary) or stream-json (events)")
        .choices(OUTPUT_FORMATS),
    )
    .addOption(new Option("--color <when>", "colour the console").choices(COLOR_MODES))
    .option("--replay <trajectory>", "replay a recorded run's model responses; report differences")
    .option("--replay-exact", "compare replayed tool output byte for byte (no normalising)")
    .addOption(new Option("--sandbox <mode>", "run bash inside a sandbox").choices(SANDBOX_MODES))
    .addOption(approvalOption("never"))
    .option("--continue", "go on with this workspace's latest session")
    .option("--resume <id>", "go on with the session ID (or a trajectory FILE)")
    .option("--no-project-instructions", "do not read AGENTS.md files")
    .action(async (task, opts) => {
      const { runCommand } = await import("./run.ts");
      setExit(await runCommand(task, opts));
    });

  modelOptions(
    program.command("interactive").description(
      "a conversation at a prompt: history, slash commands, approvals; tools persist",
    ),
  )
    .option("--max-steps <n>", "step limit per turn", positiveInteger)
    .option("-w, --working-dir <dir>", "the repository to work in (default: current directory)")
    .option("-t, --trajectory-file <file>", "record conversation N to FILE.N.json")
    .addOption(new Option("--color <when>", "colour the console").choices(COLOR_MODES))
    .addOption(new Option("--sandbox <mode>", "run bash inside a sandbox").choices(SANDBOX_MODES))
    .addOption(approvalOption("commands"))
    .option("--continue", "go on with this workspace's latest session")
    .option("--no-project-instructions", "do not read AGENTS.md files")
    .action(async (opts) => {
      const { interactiveCommand } = await import("./interactive.ts");
      setExit(await interactiveCommand(opts));
    });

  program.command("sessions")
    .description("recent sessions of a workspace (ids for --resume), newest first")
    .option("-w, --working-dir <dir>", "the workspace (default: current directory)")
    .option("-n, --limit <n>", "how many to list (default 20)", positiveInteger)
    .option("--json", "print the sessions as JSON")
    .action(async (opts) => {
      const { sessionsCommand } = await import("./sessions.ts");
      setExit(await sessionsCommand(opts));
    });

  modelOptions(
    program.command("config").description("print the resolved configuration, keys masked"),
  ).action(async (opts) => {
    const { configCommand } = await import("./config.ts");
    setExit(await configCommand(opts));
  });

  program.command("trust")
    .description("let a folder's own config file (deft.yaml) set every key, or --revoke that")
    .argument("[dir]", "the folder (default: the current one)")
    .option("--revoke", "stop trusting the folder")
    .option("--list", "print the trusted folders")
    .action(async (dir, opts) => {
      const { trustCommand } = await import("./trust.ts");
      setExit(await trustCommand(dir, opts));
    });

  const ckg = program.command("ckg").description(
    "the code knowledge graph: index a codebase, find functions, classes and methods by name",
  );
  ckg.command("index")
    .description("index DIR (default: the workspace); later searches refresh incrementally")
    .argument("[dir]", "the codebase to index")
    .option("-w, --working-dir <dir>", "workspace root (default: current directory)")
    .action(async (dir, opts) => {
      const { ckgIndex } = await import("./ckg.ts");
      setExit(await ckgIndex(dir, { workspace: await workspaceOf(opts) }));
    });
  const searches = [
    ["search-function", "function"],
    ["search-class", "class"],
    ["search-class-method", "class-method"],
  ] as const;
  for (const [name, kind] of searches) {
    ckg.command(name)
      .description(`find ${kind.replace("-", " ")}s named NAME (exact; close names on a miss)`)
      .argument("<name>", "the identifier; Cls.method also works for methods")
      .option("--path <dir>", "the codebase to search (default: the workspace)")
      .option("--no-body", "leave out the source of each match")
      .option("--json", "print matches as JSON")
      .option("-w, --working-dir <dir>", "workspace root (default: current directory)")
      .action(async (identifier, opts) => {
        const { ckgSearch } = await import("./ckg.ts");
        const workspace = await workspaceOf(opts);
        setExit(await ckgSearch(kind, identifier, { ...opts, workspace }));
      });
  }
  const edgeSearches = [
    ["search-references", "where NAME is used: calls, attribute accesses, imports, base classes"],
    ["search-callers", "the functions whose bodies call NAME"],
    ["search-subclasses", "the classes deriving from NAME"],
  ] as const;
  for (const [name, description] of edgeSearches) {
    const command = ckg.command(name)
      .description(description)
      .argument("<name>", "the identifier (exact)")
      .option("--path <dir>", "the codebase to search (default: the workspace)")
      .option("--no-body", "leave out the source of each function or class")
      .option("--json", "print matches as JSON")
      .option("-w, --working-dir <dir>", "workspace root (default: current directory)");
    if (name === "search-subclasses") {
      command.option("--indirect", "also classes deriving from subclasses, at any depth");
    }
    command.action(async (identifier, opts) => {
      const { ckgEdgeSearch } = await import("./ckg.ts");
      const workspace = await workspaceOf(opts);
      setExit(await ckgEdgeSearch(name, identifier, { ...opts, workspace }));
    });
  }

  program.command("batch")
    .description(
      "run many tasks (JSON Lines), each in its own checkout: locally, on Slurm, or as a k8s Job; " +
        "`deft batch status DIR` summarises a batch",
    )
    .argument("<tasks>", "the task file (one JSON object per line), or `status`")
    .argument("[dir]", "with `status`: the batch's output directory")
    .option("--out <dir>", "where each task's checkout, trajectory, patch and result go")
    .option(
      "--concurrency <n>",
      "tasks at once (with --slurm: array tasks at once)",
      positiveInteger,
    )
    .option(
      "--timeout <seconds>",
      "time limit per task (default 1800; a task's own wins)",
      positiveInteger,
    )
    .option("--retry-failed", "run failed tasks again (finished ones are always skipped)")
    .option("--index <i>", "run only task I (0-based), as each array task does", nonNegativeInteger)
    .option("--slurm", "submit a Slurm job array instead of running here")
    .option("--wait", "with --slurm: follow the array until it ends")
    .option("--slurm-arg <arg>", "pass ARG to sbatch (repeatable)", collect, [])
    .option("--emit <format>", "print a manifest instead of running (k8s: an Indexed Job)")
    .addOption(new Option("--output-format <format>", "summary format").choices(["text", "json"]))
    .option("-p, --provider <provider>", "model provider for every task")
    .option("-m, --model <model>", "model id for every task")
    .option("--model-base-url <url>", "base URL of the provider's API")
    .option("--config-file <file>", "config file for every task")
    .option("--max-steps <n>", "step limit per task (a task's own wins)", positiveInteger)
    .addOption(new Option("--sandbox <mode>", "run bash inside a sandbox").choices(SANDBOX_MODES))
    .action(async (tasks, dir, opts) => {
      const { batchCommand } = await import("./batch.ts");
      setExit(await batchCommand(tasks, dir, opts));
    });

  program.command("mcp")
    .description("MCP server over stdio exposing the tools (state lasts for the connection)")
    .option("-w, --working-dir <dir>", "workspace root (default: current directory)")
    .addOption(new Option("--sandbox <mode>", "run bash inside a sandbox").choices(SANDBOX_MODES))
    .option("--deadline <spec>", "seconds a tool call may run: SECONDS, or TOOL=SECONDS,...")
    .option("--max-line-bytes <n>", "longest input line accepted, in bytes (default 256 MiB)")
    .action(async (opts) => {
      const { mcpCommand } = await import("./mcp.ts");
      setExit(await mcpCommand(opts));
    });

  return program;
}

const SANDBOX_MODES = ["none", "workspace-write", "read-only"];

function approvalOption(defaultMode: string): Option {
  return new Option(
    "--approval <mode>",
    `ask before tool calls: never, commands (bash, except read-only ones) or all (also edits); ` +
      `default: config approval, else ${defaultMode}`,
  ).choices(["never", "commands", "all"]);
}

async function workspaceOf(opts: { workingDir?: string }): Promise<string> {
  const context = await import("./context.ts");
  return await context.workspaceOf(opts.workingDir);
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

/** Parses `args` with commander and runs the command; returns the exit code. */
export async function runProgram(args: readonly string[]): Promise<number> {
  let code = 0;
  const program = buildProgram((c) => code = c);
  if (args.length === 0) {
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
