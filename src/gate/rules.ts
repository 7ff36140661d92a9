/**
 * The lasting rules as the gate sees them: what the rule book in force (the session's approval
 * rules, agent/approval_rules.ts, which also loads and saves them) says about a call. Declared
 * here by shape, so the gate depends on no module above it.
 */
import type { ApprovalAction } from "../config/approval_rules.ts";
import type { CallEffect } from "../tools/base.ts";

/** The rule (or, for a compound command's allow, the rules) that decided a call. */
export interface RuleMatch {
  action: ApprovalAction;
  /** The rule's text and source; several joined with ` + ` when parts needed several. */
  rule: { text: string; source: string };
  /** Why it asks although it may not match: part of the command could not be judged. */
  reason?: string;
  /** With `reason`: the kind of rule the command may hide from (a deny is refused unasked). */
  unjudged?: "deny" | "ask";
}

/** The approval rules in force, and the project an "always in this project" is saved for. */
export interface RuleBook {
  /** The project's real path; absent: "always" holds for the session only. */
  readonly project?: string;
  /** The rule that decides a call of `toolName` doing `effect`, or undefined. */
  match(
    toolName: string,
    effect: CallEffect | undefined,
    workspace?: string,
  ): RuleMatch | undefined;
  /** Saves a rule for the project (and applies it now); returns the file's path. */
  addProject(action: ApprovalAction, text: string): Promise<string>;
}
