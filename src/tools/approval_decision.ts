/**
 * The record of one call's approval: whether it was let through and who decided. The gate
 * (src/gate/pipeline.ts) makes it, the executor hands it back beside the call's result, and the
 * trajectory, `deft run --json` and the HTML report show it.
 */

/**
 * Who decided. `mode`: the approval mode let the call through without asking (`never`, or a
 * reader or an edit `commands` does not ask about). `session`: the user answered "session"
 * earlier, so approval is off for the rest of it. `always`: an earlier "always" answer covers
 * the call. `user`: the user was asked and answered (or gave no answer, which is a no).
 * `recording`: a replay (`deft run --replay`) repeated the recorded decision. `rule`: an
 * approval rule (`rule` says which). `hook`: a PreToolUse hook (`hook` says which).
 */
export type DecidedBy = "mode" | "session" | "always" | "user" | "recording" | "rule" | "hook";

/** The user's answer to an approval question; `none` when the prompt closed unanswered. */
export type ApprovalAnswer = "yes" | "no" | "always" | "session" | "none";

/** One call's approval decision, as recorded beside the call's result. */
export interface ApprovalDecision {
  /** `allow`: the call was let through; `deny`: it was refused before it ran. */
  decision: "allow" | "deny";
  decided_by: DecidedBy;
  /** The approval mode in force when the call was decided. */
  mode: string;
  /** Whether the user was asked about this call. */
  asked: boolean;
  /** Let through unasked on condition it runs where it cannot act (a reader, sandboxed). */
  unasked?: true;
  /**
   * What an "always" answer covers: `$ PREFIX` for commands, `edit PATH`, `tool NAME`. Set when
   * such an answer decided the call, and on the answer that gave it.
   */
  always?: string;
  /**
   * The user typed the call themselves (`!cmd`, `/undo` at the prompt): that was their yes, so
   * nobody was asked (`decided_by: "user"`, `asked: false`).
   */
  typed?: true;
  /** The user's answer, when decided by the user. */
  answer?: ApprovalAnswer;
  /** The reason the model was given with a refusal (the user's words after "no"). */
  reason?: string;
  /** The rule that decided, for `rule`: its text and where it was set (a config file). */
  rule?: { text: string; source: string };
  /** The hook that decided, for `hook`: its name (the command) and where it was set. */
  hook?: { name: string; source?: string };
  /**
   * A rule or hook asked about the call where nobody could be asked (`deft run`, `serve`, `mcp`,
   * batch tasks), so it was refused (`--approve-asks` lets such calls run instead).
   */
  nobody_to_ask?: true;
  /** The arguments a PreToolUse hook rewrote the call into (the model's stay with the call). */
  updated_input?: Record<string, unknown>;
}
