/**
 * The fast path for the pipeline commands, `deft sessions`, `deft config`, `deft interactive` and
 * the launch line that opens a conversation (`deft`, `deft "PROMPT"`, `deft -c`; `deft --version`
 * and `deft --help` answer in help.ts): parses a well-formed command line against the tables in
 * `spec.ts` (`FAST_COMMANDS`, `LAUNCH`) by hand, without node:util (the first `node:` module costs
 * every start ~6 ms) or commander (which loads most of Node's compatibility layer). It takes only
 * the plain forms (`--long value`, `--long=value`, `-s value`, a flag alone, `--no-x`, an optional
 * value given or not, a repeated option, positionals); anything else (help, unknown options,
 * grouped short flags, `--`, a value that looks like an option, bad choices, missing arguments,
 * a launch line that is not surely a conversation) returns undefined, and commander takes over to
 * parse it or to print help or a proper usage error.
 */
import {
  type ArgumentSpec,
  COMMANDS,
  FAST_COMMANDS,
  LAUNCH,
  optionKey,
  type OptionSpec,
} from "./spec.ts";

/** A parsed command line of one of `FAST_COMMANDS`, or the launch line (`deft`). */
export interface FastParse {
  command: keyof typeof FAST_COMMANDS | "deft";
  positionals: (string | undefined)[];
  options: Record<string, string | boolean | number | string[]>;
}

/** Parses `args` when it is a plain, valid command of `FAST_COMMANDS`; otherwise undefined. */
export function fastParse(args: readonly string[]): FastParse | undefined {
  const [command, ...rest] = args;
  if (!Object.hasOwn(FAST_COMMANDS, command)) return launchParse(args);
  const spec = FAST_COMMANDS[command as keyof typeof FAST_COMMANDS];
  const parsed = commandParse(rest, spec.arguments, spec.options);
  if (!parsed) return undefined;
  return { command: command as FastParse["command"], ...parsed };
}

/**
 * The launch line when it surely opens a conversation: no `-p` (a headless run), no command
 * name among its words, no `-C` and `-w` naming two folders, and either no prompt (on a
 * terminal: off one, bare `deft` is a usage error) or one prompt of words (one word alone is
 * taken for a mistyped command, unless with `-c`/`-r`). All else is commander's (program.ts).
 */
function launchParse(args: readonly string[]): FastParse | undefined {
  if (args.length === 0 && !(Deno.stdin.isTerminal() && Deno.stderr.isTerminal())) {
    return undefined;
  }
  const parsed = commandParse(args, LAUNCH.arguments, LAUNCH.options);
  if (!parsed) return undefined;
  const { options } = parsed;
  const words = parsed.positionals as string[];
  if (options.print !== undefined) return undefined;
  if (words.some((w) => Object.hasOwn(COMMANDS, w) || w === "exec" || w === "help")) {
    return undefined;
  }
  if (
    options.cd !== undefined && options.workingDir !== undefined &&
    options.cd !== options.workingDir
  ) return undefined;
  const resuming = options.continue !== undefined || options.resume !== undefined;
  if (words.length > 1 || (words.length === 1 && !/\S\s+\S/.test(words[0]) && !resuming)) {
    return undefined;
  }
  return { command: "deft", positionals: words, options };
}

/**
 * The positionals and options of `args` for a command taking `specs` and `argSpecs`, as
 * commander gives them (defaults filled in, integers as numbers, a variadic argument's words in
 * `positionals`); undefined when it is not a plain, valid line.
 */
function commandParse(
  args: readonly string[],
  argSpecs: readonly ArgumentSpec[],
  specs: readonly OptionSpec[],
): Omit<FastParse, "command"> | undefined {
  const parsed = plainParse(args, specs);
  if (!parsed) return undefined;
  const { values, positionals } = parsed;
  const required = argSpecs.filter((a) => a.required).length;
  const variadic = argSpecs.at(-1)?.variadic === true;
  if (positionals.length < required || (!variadic && positionals.length > argSpecs.length)) {
    return undefined;
  }
  const options: FastParse["options"] = {};
  for (const option of specs) {
    const negated = option.long.startsWith("no-");
    const key = optionKey(negated ? option.long.slice(3) : option.long);
    // Commander's defaults: a `--no-x` flag's x is true, a list starts empty.
    const value = values.get(option.long) ??
      (negated ? true : option.repeatable ? [] : option.default);
    if (value === undefined) continue;
    if (Array.isArray(value) || typeof value === "boolean") {
      options[key] = value;
      continue;
    }
    if (option.choices && !option.choices.includes(value)) return undefined;
    if (option.integer) {
      // Plain digits only; anything else (and a 0 where ≥ 1 is asked) is commander's to explain.
      const n = Number(value);
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) return undefined;
      if (option.integer === "positive" && n < 1) return undefined;
      options[key] = n;
      continue;
    }
    options[key] = value;
  }
  return {
    positionals: variadic ? positionals : argSpecs.map((_, i) => positionals[i]),
    options,
  };
}

/**
 * The options and positionals of `args` in the plain forms only; undefined for anything else
 * (then commander, which knows every form, parses the line or explains what is wrong). A later
 * value of an option replaces an earlier one, as commander does, except that a repeatable
 * option's values collect in order; a `--no-x` flag is stored as false.
 */
function plainParse(
  args: readonly string[],
  options: readonly OptionSpec[],
): { values: Map<string, string | boolean | string[]>; positionals: string[] } | undefined {
  const values = new Map<string, string | boolean | string[]>();
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
      values.set(option.long, !option.long.startsWith("no-"));
      continue;
    }
    // An optional value is the next word unless that is an option (commander's rule).
    const next = args[i + 1];
    if (option.optional && inline === undefined && (next === undefined || next.startsWith("-"))) {
      values.set(option.long, true);
      continue;
    }
    const value = inline ?? args[++i];
    if (value === undefined || value.startsWith("-")) return undefined;
    if (option.repeatable) {
      const earlier = values.get(option.long);
      values.set(option.long, [...(Array.isArray(earlier) ? earlier : []), value]);
    } else values.set(option.long, value);
  }
  return { values, positionals };
}
