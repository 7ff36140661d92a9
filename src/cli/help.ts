/**
 * `deft --help` without commander: the top-level help written from spec.ts's tables (`LAUNCH`,
 * `COMMANDS`), the same tables program.ts builds commander's program from, laid out as
 * commander lays out its help (its `Help` class, 14.x: terms padded to the widest, descriptions
 * wrapped at the terminal's width, or 80 columns off a terminal). Loading commander costs more
 * than the rest of Deft's start together; the help a user types first does not need it.
 * tests/cli/help_test.ts holds this text to commander's, byte for byte, at several widths.
 */
import {
  argumentTerm,
  type CommandEntry,
  COMMANDS,
  LAUNCH,
  optionFlags,
  type OptionSpec,
} from "./spec.ts";
import { VERSION } from "../version.ts";

/**
 * What `deft --version` (or `-V`) and `deft --help` (or `-h`) print, or undefined for any other
 * command line. Loading commander costs more than the rest of a pipeline call together, so the
 * most common queries of all answer without it, exactly as commander would. `width` is the
 * help's width (default: the terminal's, else 80).
 */
export function fastAnswer(
  args: readonly string[],
  width: number | undefined = helpWidth(),
): string | undefined {
  if (args.length !== 1) return undefined;
  if (args[0] === "--version" || args[0] === "-V") return `${VERSION}\n`;
  if (args[0] === "--help" || args[0] === "-h") return topLevelHelp(width);
  return undefined;
}

/** Commander's built-in options, as its help shows them: first and last in the list. */
const VERSION_OPTION = { flags: "-V, --version", description: "output the version number" };
const HELP_OPTION = { flags: "-h, --help", description: "display help for command" };

/** Below this many columns for a description, commander does not wrap it. */
const MIN_WIDTH_TO_WRAP = 40;

/** The top-level help, `width` columns wide (commander's default: 80). */
export function topLevelHelp(width = 80): string {
  const argumentItems = LAUNCH.arguments.map((a) => [a.name, a.description]);
  const optionItems = [
    [VERSION_OPTION.flags, VERSION_OPTION.description],
    ...LAUNCH.options.map((o) => [optionFlags(o), optionDescription(o)]),
    [HELP_OPTION.flags, HELP_OPTION.description],
  ];
  const commandItems = (Object.entries(COMMANDS) as [string, CommandEntry][]).map((
    [name, entry],
  ) => [
    [
      name + (entry.alias ? `|${entry.alias}` : ""),
      entry.options ? "[options]" : "",
      ...entry.arguments.map(argumentTerm),
    ].filter((part) => part !== "").join(" "),
    entry.description,
  ]);
  const termWidth = Math.max(
    ...[...argumentItems, ...optionItems, ...commandItems].map(([term]) => term.length),
  );
  const list = (heading: string, items: string[][]) =>
    items.length === 0
      ? []
      : [heading, ...items.map(([term, text]) => item(term, text, termWidth, width)), ""];
  const usage = ["[options]", "[command]", ...LAUNCH.arguments.map(argumentTerm)].join(" ");
  return [
    `Usage: deft ${usage}`,
    "",
    boxWrap(LAUNCH.description, width),
    "",
    ...list("Arguments:", argumentItems),
    ...list("Options:", optionItems),
    ...list("Commands:", commandItems),
  ].join("\n");
}

/** The help's width: the terminal's columns when stdout is one, as commander reads it. */
export function helpWidth(): number | undefined {
  try {
    return Deno.stdout.isTerminal() ? Deno.consoleSize().columns : undefined;
  } catch {
    return undefined;
  }
}

/** An option's description with its choices, as commander adds them. */
function optionDescription(o: OptionSpec): string {
  const extra: string[] = [];
  if (o.choices) extra.push(`choices: ${o.choices.map((c) => JSON.stringify(c)).join(", ")}`);
  const fallback = o.default ?? (o.repeatable ? [] : undefined);
  if (fallback !== undefined && o.value) extra.push(`default: ${JSON.stringify(fallback)}`);
  return extra.length > 0 ? `${o.description} (${extra.join(", ")})` : o.description;
}

/** One entry of a list: the term padded, then its description wrapped beside it. */
function item(term: string, description: string, termWidth: number, width: number): string {
  if (!description) return `  ${term}`;
  const remaining = width - termWidth - 4;
  const text = remaining < MIN_WIDTH_TO_WRAP || /\n[^\S\r\n]/.test(description)
    ? description
    : boxWrap(description, remaining).replace(/\n/g, `\n${" ".repeat(termWidth + 2)}`);
  return `  ${term.padEnd(termWidth)}  ${text.replace(/\n/g, "\n  ")}`;
}

/** Wraps `text` at `width` columns on whitespace, as commander's `boxWrap` does. */
function boxWrap(text: string, width: number): string {
  if (width < MIN_WIDTH_TO_WRAP) return text;
  const lines: string[] = [];
  for (const line of text.split(/\r\n|\n/)) {
    const chunks = line.match(/\s*\S+/g);
    if (chunks === null) {
      lines.push("");
      continue;
    }
    let current = [chunks[0]];
    let used = chunks[0].length;
    for (const chunk of chunks.slice(1)) {
      if (used + chunk.length <= width) {
        current.push(chunk);
        used += chunk.length;
        continue;
      }
      lines.push(current.join(""));
      const next = chunk.trimStart();
      current = [next];
      used = next.length;
    }
    lines.push(current.join(""));
  }
  return lines.join("\n");
}
