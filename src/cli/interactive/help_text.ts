/**
 * What /help says: the slash commands' names, usage and descriptions, and the composer's keys.
 * Light on purpose: the prompt answers /help before the session is assembled (the commands
 * themselves, in ./commands.ts, need it).
 */

/** A slash command as /help and `deft acp` name it. */
export interface CommandHelp {
  name: string;
  usage: string;
  help: string;
}

/** The commands, in /help's order; an empty `help` is left out of it (an alias). */
export const COMMAND_HELP: readonly CommandHelp[] = [
  { name: "help", usage: "/help", help: "this text" },
  {
    name: "status",
    usage: "/status",
    help: "model, workspace, approval mode and rules, conversation, usage, background shells",
  },
  {
    name: "clear",
    usage: "/clear",
    help: "start a new conversation (the shell and edit history stay)",
  },
  {
    name: "diff",
    usage: "/diff",
    help: "the changes made since the session started (git diff, new files included)",
  },
  {
    name: "undo",
    usage: "/undo",
    help: "take back the file edits of the last turn (files it created are removed)",
  },
  {
    name: "rewind",
    usage: "/rewind [N [files|conversation|both]]",
    help: "go back to a turn's checkpoint: files (shell changes too), conversation, or both",
  },
  {
    name: "compact",
    usage: "/compact [instructions]",
    help: "replace the conversation by the model's summary of it (frees context)",
  },
  {
    name: "init",
    usage: "/init",
    help: "draft an AGENTS.md for this repository (beside it if there is one) to review",
  },
  { name: "cost", usage: "/cost", help: "tokens and cost of this session, per turn and in total" },
  {
    name: "model",
    usage: "/model [ID]",
    help: "show the model, or switch to model ID (same provider) for the next turns",
  },
  {
    name: "approval",
    usage: "/approval [never|commands|all]",
    help: "show or change when Deft asks before a tool call",
  },
  {
    name: "resume",
    usage: "/resume [ID]",
    help: "go on with session ID (none: pick one from a list)",
  },
  { name: "exit", usage: "/exit", help: "leave (also /quit, exit, Ctrl-D on an empty line)" },
  { name: "quit", usage: "/quit", help: "" },
];

/** The help entry of command `name`. */
export function doc(name: string): CommandHelp {
  const found = COMMAND_HELP.find((c) => c.name === name);
  if (!found) throw new Error(`no help for /${name}`);
  return found;
}

/** Where /help's descriptions start; a longer name puts its description on the next line. */
const HELP_COLUMN = 32;

/** The composer's keys and prefixes, as /help lists them after the commands. */
const KEYS: [string, string][] = [
  ["@PATH", "attach a file or image to the prompt (Tab completes the name)"],
  ["!COMMAND", "run a shell command; what it prints goes with your next prompt"],
  ["!", "shell mode: every line is a command until Esc or another !"],
  ["Alt-Enter, Ctrl-J", "a new line in the prompt (or end the line with \\)"],
  ["Up, Down", "earlier prompts"],
  ["Ctrl-R", "search earlier prompts for what is typed (again: older ones)"],
  ["Esc", "stop the running turn (in shell mode: leave it)"],
  ["Esc Esc", "on an empty line: /rewind, back to a turn's checkpoint"],
  ["Ctrl-C", "stop the running turn"],
  ["Ctrl-D", "leave (on an empty line)"],
];

/** One entry of /help: the name, then its description at HELP_COLUMN. */
function helpRow(name: string, help: string): string[] {
  return name.length < HELP_COLUMN
    ? [`  ${name.padEnd(HELP_COLUMN)}${help}`]
    : [`  ${name}`, `  ${" ".repeat(HELP_COLUMN)}${help}`];
}

/** The help text: how a turn works, the commands and the keys. */
export function helpText(): string {
  const commands = COMMAND_HELP.filter((c) => c.help !== "").flatMap((c) =>
    helpRow(c.usage, c.help)
  );
  return [
    // One line: the console wraps it at the terminal's width.
    "Type a prompt and press Enter. The model works with the tools until it answers without a " +
    "tool call (the answer is shown) or calls task_done; then it is your turn again. The " +
    "conversation carries over from turn to turn until /clear. Pasted lines form one prompt.",
    "Commands:",
    ...commands,
    "Keys:",
    ...KEYS.flatMap(([key, help]) => helpRow(key, help)),
  ].join("\n");
}
