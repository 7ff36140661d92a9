/**
 * The fast path for the pipeline commands, `deft sessions` and `deft config` (`deft --version` and
 * `deft --help` answer in help.ts): parses a well-formed command line against the table in
 * `spec.ts` (`FAST_COMMANDS`) by hand, without node:util (the first `node:` module costs every
 * start ~6 ms). It takes only the plain forms (`--long value`, `--long=value`, `-s value`, a
 * flag alone, positionals); anything else (help, unknown options, grouped short flags, `--`, a
 * value that looks like an option, bad choices, missing arguments) returns undefined, and
 * commander takes over to parse it or to print help or a proper usage error.
 */
import { type CommandSpec, FAST_COMMANDS, optionKey, type OptionSpec } from "./spec.ts";

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
  // What is not parsed here as commander parses it (optional values, lists, `--no-x`): commander.
  if (spec.options.some((o) => o.optional || o.repeatable || o.long.startsWith("no-"))) {
    return undefined;
  }
  const parsed = plainParse(rest, spec.options);
  if (!parsed) return undefined;
  const { values, positionals } = parsed;
  const required = spec.arguments.filter((a) => a.required).length;
  if (positionals.length < required || positionals.length > spec.arguments.length) {
    return undefined;
  }
  const options: FastParse["options"] = {};
  for (const option of spec.options) {
    const value = values.get(option.long) ?? option.default;
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

/**
 * The options and positionals of `args` in the plain forms only; undefined for anything else
 * (then commander, which knows every form, parses the line or explains what is wrong). A later
 * value of an option replaces an earlier one, as commander does.
 */
function plainParse(
  args: readonly string[],
  options: readonly OptionSpec[],
): { values: Map<string, string | boolean>; positionals: string[] } | undefined {
  const values = new Map<string, string | boolean>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("-")) {
      positionals.push(arg);
      continue;
    }
    let option: OptionSpec | undefined;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const long = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      if (eq !== -1) inline = arg.slice(eq + 1);
      option = options.find((o) => o.long === long);
    } else if (arg.length === 2) {
      option = options.find((o) => o.short === arg[1]);
    }
    if (!option) return undefined;
    if (!option.value) {
      if (inline !== undefined) return undefined;
      values.set(option.long, true);
      continue;
    }
    const value = inline ?? args[++i];
    if (value === undefined || value.startsWith("-")) return undefined;
    values.set(option.long, value);
  }
  return { values, positionals };
}
