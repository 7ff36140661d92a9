/**
 * The approval modes, on their own so that the command line's help can list them without loading
 * the gate.
 */

/** The approval modes, most permissive first. */
export const APPROVAL_MODES = ["never", "commands", "all"] as const;

/** When Deft asks before a tool call. */
export type ApprovalMode = typeof APPROVAL_MODES[number];

/** Whether `value` is an approval mode. */
export function isApprovalMode(value: unknown): value is ApprovalMode {
  return APPROVAL_MODES.includes(value as ApprovalMode);
}
