/**
 * Deft's slash commands in an editor. After `session/new` and `session/load` the session
 * advertises them (`available_commands_update`); a prompt that starts with one runs it instead
 * of reaching the model. The commands are `deft interactive`'s own (src/cli/interactive), given
 * by the command through the host: here they only get a context that reads and changes the ACP
 * session, and what they write goes back as agent message chunks. None asks a question: where
 * the terminal would (which checkpoint `/rewind` goes to), the command says what to type instead.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { Session } from "../agent/session.ts";
import type { LLMMessage } from "../llm/types.ts";
import type { Trajectory, TrajectoryRecorder } from "../trajectory/recorder.ts";

/** The commands an editor gets, in the order it lists them. */
export const ACP_COMMANDS = ["compact", "undo", "rewind", "init", "cost", "status"] as const;

/** A command as `deft interactive` describes it (its `/help` line). */
export interface CommandInfo {
  name: string;
  usage: string;
  help: string;
}

/** What a command may read and change of an ACP session (`deft interactive`'s context). */
export interface AcpCommandContext {
  session: Session;
  conversation: LLMMessage[];
  recorder?: TrajectoryRecorder;
  turns: number;
  tokens: number;
  /** Starts the conversation over; `from` fills it (a compacted one, and what it continues). */
  reset(from?: { conversation: LLMMessage[]; link: NonNullable<Trajectory["resumed_from"]> }): void;
  write(text: string): void;
  /** Runs a command's model work as the prompt's turn: `session/cancel` aborts `signal`. */
  asTurn<T>(work: (signal: AbortSignal) => Promise<T>, waiting?: string): Promise<T | undefined>;
}

/** The `available_commands_update` of a session: the ACP commands `infos` describes. */
export function commandsUpdate(infos: readonly CommandInfo[]): {
  sessionUpdate: "available_commands_update";
  availableCommands: acp.AvailableCommand[];
} {
  const availableCommands = ACP_COMMANDS.flatMap((name) => {
    const info = infos.find((i) => i.name === name);
    if (!info) return [];
    // What follows the name in its usage (`[instructions]`) is the input it takes.
    const hint = info.usage.replace(/^\/\S+\s*/, "");
    return [{
      name,
      description: info.help,
      ...(hint ? { input: { hint } } : {}),
    }];
  });
  return { sessionUpdate: "available_commands_update", availableCommands };
}

/** What a prompt's text asks for: one of the ACP commands, another of Deft's, or the model. */
export type PromptKind =
  | { command: string }
  | { refused: string }
  | undefined;

/**
 * The command `text` starts with: an ACP command (`{command}`: the whole line, as typed), a
 * command of `deft interactive` an editor does not take (`{refused}`: why, sent back instead of
 * reaching the model), or undefined: a prompt for the model (a path such as `/tmp/x` included).
 */
export function commandIn(text: string, infos: readonly CommandInfo[]): PromptKind {
  const match = /^\/([A-Za-z][\w-]*)(?:\s|$)/.exec(text.trimStart());
  if (!match) return undefined;
  const name = match[1].toLowerCase();
  if ((ACP_COMMANDS as readonly string[]).includes(name)) return { command: text.trim() };
  if (!infos.some((i) => i.name === name)) return undefined;
  return {
    refused: `/${name} is a command of \`deft interactive\`, not of the editor; the editor's ` +
      `are ${ACP_COMMANDS.map((c) => `/${c}`).join(" ")}` +
      (name === "model" ? " (pick the model in the session's model option)" : "") +
      ". Nothing was sent to the model.",
  };
}

/** A command's output as the text of an agent message chunk: tables keep their columns. */
export function commandText(text: string): string {
  const body = text.replace(/\n+$/, "");
  return body.includes("\n") ? `\`\`\`\n${body.replaceAll("```", "ˋˋˋ")}\n\`\`\`\n` : `${body}\n`;
}
