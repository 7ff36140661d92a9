/**
 * The fast path for the pipeline commands, `deft sessions` and `deft config` (`deft --version` and
 * `deft --help` answer in help.ts): parses a well-formed command line with node:util's parseArgs
 * against the table in `spec.ts` (`FAST_COMMANDS`). Anything it does not fully understand (help,
 * unknown options, bad choices, missing arguments) returns undefined, and commander takes over
 * to print help or a proper usage error.
 */
import { parseArgs } from "node:util";
import { type CommandSpec, FAST_COMMANDS, optionKey } from "./spec.ts";

/** A parsed command line of one of `FAST_COMMANDS`. */
export interface FastParse {
  command: keyof typeof FAST_COMMANDS;
  positionals: (string | undefined)[];
  options: Record<string, string | boolean | number>;
}

/** Parses `args` when it is a plain, valid command of `FAST_COMMANDS`; otherwise undefined. */
export function fastParse(args: readonly string[]): FastParse | undefined {
  const [command, ...rest] = args;
  if (!Object.hasOwn(FAST_COMMANDS, command)) return undefined;
  const spec: Omit<CommandSpec, "description"> =
    FAST_COMMANDS[command as keyof typeof FAST_COMMANDS];
  const config: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const o of spec.options) {
    // What parseArgs does not do as commander does (optional values, lists, `--no-x`): commander.
    if (o.optional || o.repeatable || o.long.startsWith("no-")) return undefined;
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
  const options: FastParse["options"] = {};
  for (const option of spec.options) {
    const value = values[option.long] ?? option.default;
    if (value === undefined) continue;
    if (option.choices && !option.choices.includes(value as string)) return undefined;
    if (option.integer) {
      // Plain digits only; anything else (and a 0 where ≥ 1 is asked) is commander's to explain.
      const n = Number(value);
      if (!/^\d+$/.test(value as string) || !Number.isSafeInteger(n)) return undefined;
      if (option.integer === "positive" && n < 1) return undefined;
      options[optionKey(option.long)] = n;
      continue;
    }
    options[optionKey(option.long)] = value as string | boolean;
  }
  return {
    command: command as FastParse["command"],
    positionals: spec.arguments.map((_, i) => positionals[i]),
    options,
  };
}
