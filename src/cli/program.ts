/**
 * The full command line, built with commander: help for every command, usage errors, and the
 * commands that have no fast path. Usage errors exit with code 2.
 */
import { Argument, Command, CommanderError, Option } from "commander";
import { VERSION } from "../version.ts";
import { runPipelineCommand } from "./dispatch.ts";
import type { FastParse } from "./fast.ts";
import { type CommandSpec, PIPELINE_COMMANDS } from "./spec.ts";

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
  return program;
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
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    throw e;
  }
}
