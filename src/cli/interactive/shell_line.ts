/**
 * `!command` at the interactive prompt: the user's own shell command, run by the session's bash
 * tool (its shell, its sandbox, its working folder) through the session's gate pipeline as a call
 * the user typed: PreToolUse and PostToolUse hooks and deny rules apply, the approval mode asks
 * nothing (typing it was the yes), and it is traced like any call. No model call is made. Its
 * output is shown, and kept as the user's own context for the next prompt, marked as such so the
 * model does not take it for its own tool call; both name the command that ran, which a hook may
 * have rewritten. `!` alone toggles a
 * shell mode where every line is a command, until Esc or another empty `!`.
 */
import type { ApprovalDecision } from "../../tools/approval_decision.ts";
import type { ToolExecutor } from "../../tools/executor.ts";
import { maskOutput } from "../../policy/secrets.ts";

/** Longest output kept as context for the model (characters); the rest is cut with a note. */
const CONTEXT_CHARS = 16_000;

/** What a prompt line is: a shell command, the shell mode toggle, or neither. */
export type ShellLine = { command: string } | { toggle: true } | undefined;

/** Reads `input` (trimmed) as a shell line; in shell mode every line but `!` is a command. */
export function shellLine(input: string, shellMode: boolean): ShellLine {
  if (input === "!") return { toggle: true };
  if (input.startsWith("!")) return { command: input.slice(1).trim() };
  if (shellMode) return { command: input };
  return undefined;
}

/**
 * The outcome of a `!command`: the text to show, the context block for the next prompt, and the
 * command that ran (a PreToolUse hook may have rewritten the typed one).
 */
export interface ShellOutcome {
  shown: string;
  context: string;
  command: string;
}

/** The user's shell commands run so far, to tell their calls apart (hooks see the id). */
let typedCommands = 0;

/** Runs `command` in the session's bash tool, through the gate as the user's own call. */
export async function runShellLine(
  executor: ToolExecutor,
  command: string,
): Promise<ShellOutcome> {
  const bash = executor.find("bash");
  if (!bash) {
    const shown = "no shell in this session (the bash tool is turned off): nothing was run.";
    return { shown, context: "", command };
  }
  const result = await executor.executeToolCall({
    name: bash.name,
    call_id: `user-shell-${++typedCommands}`,
    arguments: { command },
    by: "user",
  });
  const refused = result.approval?.decision === "deny";
  if (refused) {
    // Nothing ran: the refusal is shown, and nothing goes to the model.
    return { shown: refusal(result.approval!, result.error ?? "refused"), context: "", command };
  }
  // What ran is what the gate let through: a hook's rewrite, when there was one.
  const rewritten = result.approval?.updated_input?.command;
  const ran = typeof rewritten === "string" ? rewritten : command;
  const parts = [result.output ?? "", result.error ?? ""].filter((p) => p.trim() !== "");
  const output = maskOutput(parts.join("\n").trimEnd());
  const code = result.error_code;
  const kept = output.length > CONTEXT_CHARS
    ? `${output.slice(0, CONTEXT_CHARS)}\n[… ${output.length - CONTEXT_CHARS} more characters cut]`
    : output;
  const context = `<user-shell-command>\n` +
    `The user ran this command in the session's shell themselves (not a tool call of yours); ` +
    `its output is context for their next message.\n$ ${ran}\n${kept}\n` +
    `(exit code ${code})\n</user-shell-command>`;
  const changed = ran === command ? "" : `a hook changed the command; it ran: $ ${ran}\n`;
  const shown = `${changed}${output === "" ? "(no output)" : output}\n(exit code ${code}; ` +
    `kept as context for your next prompt)`;
  return { shown, context, command: ran };
}

/** Why the gate refused the user's command, for the user (a rule's refusal speaks to the model). */
function refusal(approval: ApprovalDecision, error: string): string {
  if (approval.decided_by === "rule" && approval.rule && !approval.reason) {
    return `not run: the deny rule \`${approval.rule.text}\` (set in ${approval.rule.source}) ` +
      `refuses it.`;
  }
  return `not run: ${maskOutput(error)}`;
}
