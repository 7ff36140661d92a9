/**
 * A tool's result as the message the model reads: the same in a live turn and in a conversation
 * rebuilt from a trajectory (`deft -c`, `-r`, ACP `session/load`), and bounded, so a long session
 * never holds hundreds of huge answers whole, in memory and in every request.
 */
import type { LLMMessage } from "./types.ts";

/**
 * The most characters of one tool result kept in the conversation. The tools bound their own
 * output (bash at 30,000 characters, a view at 16,000), but an MCP server's or a JSON view's is
 * whatever it sent. Far above any built-in tool's own limit, so theirs are never cut here.
 */
export const HISTORY_RESULT_CHARS = 100_000;

/** What a tool call gave, as the trajectory records it. */
export interface ToolOutcome {
  call_id: string;
  name: string;
  success: boolean;
  output: string | null | undefined;
  error: string | null | undefined;
}

/** The `tool` message for `outcome`. */
export function toolMessage(outcome: ToolOutcome): LLMMessage {
  const parts: string[] = [];
  if (outcome.output) parts.push(outcome.output);
  if (outcome.error) parts.push(outcome.success ? outcome.error : `Error: ${outcome.error}`);
  return {
    role: "tool",
    call_id: outcome.call_id,
    name: outcome.name,
    content: bounded(parts.join("\n")) ||
      (outcome.success ? "(no output)" : "Error: the tool failed without a message."),
    is_error: !outcome.success,
  };
}

/** `text` within HISTORY_RESULT_CHARS: its start and end, and a line saying what was dropped. */
function bounded(text: string): string {
  if (text.length <= HISTORY_RESULT_CHARS) return text;
  const head = Math.floor(HISTORY_RESULT_CHARS * 2 / 3);
  const tail = HISTORY_RESULT_CHARS - head;
  const dropped = text.length - head - tail;
  return `${text.slice(0, head)}\n[… ${dropped} characters of this result were dropped here to ` +
    `keep the conversation bounded (the trajectory keeps them); ask for a narrower part if you ` +
    `need them …]\n${text.slice(text.length - tail)}`;
}
