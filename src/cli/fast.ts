/**
 * The fast path for the pipeline commands (`deft --version` and `deft --help` answer in help.ts):
 * parses a well-formed command line with node:util's
 * parseArgs against the table in `spec.ts`. Anything it does not fully understand (help,
 * unknown options, bad choices, missing arguments) returns undefined, and commander takes over
 * to print help or a proper usage error.
 */
import { parseArgs } from "node:util";
import { type CommandSpec, optionKey, PIPELINE_COMMANDS } from "./spec.ts";

/** A parsed pipeline command line. */
export interface FastParse {
  command: keyof typeof PIPELINE_COMMANDS;
  positionals: (string | undefined)[];
  options: Record<string, string | boolean>;
}

/** Parses `args` when it is a plain, valid pipeline command; otherwise returns undefined. */
export function fastParse(args: readonly string[]): FastParse | undefined {
  const [command, ...rest] = args;
  if (!Object.hasOwn(PIPELINE_COMMANDS, command)) return undefined;
  const spec: CommandSpec = PIPELINE_COMMANDS[command as keyof typeof PIPELINE_COMMANDS];
  const config: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const o of spec.options) {
    if (o.optional) return undefined; // parseArgs has no optional values: commander decides.
    config[o.long] = { type: o.value ? "string" : "boolean" };
    if (o.short) config[o.long].short = o.short;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: config, allowPositionals: true, strict: true });
  } catch (e) {
    // A command line parseArgs rejects goes to commander, which explains the mistake.
    if (String((e as { code?: string }).code).startsWith("ERR_PARSE_ARGS")) return undefined;
    throw e;
  }
  const { values, positionals } = parsed;
  const required = spec.arguments.filter((a) => a.required).length;
  if (positionals.length < required || positionals.length > spec.arguments.length) {
    return undefined;
  }
  const options: Record<string, string | boolean> = {};
  for (const option of spec.options) {
    const value = values[option.long] ?? option.default;
    if (value === undefined) continue;
    if (option.choices && !option.choices.includes(value as string)) return undefined;
    options[optionKey(option.long)] = value as string | boolean;
  }
  return {
    command: command as FastParse["command"],
    positionals: spec.arguments.map((_, i) => positionals[i]),
    options,
  };
}
