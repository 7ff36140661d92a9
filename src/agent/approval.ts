/**
 * The approval gate as the agent's users name it. It lives in src/gate/, beside the other steps
 * every tool call passes (hooks, lasting rules, the approval mode, the call plan, the record):
 * see src/gate/pipeline.ts.
 */
export { ApprovalGate } from "../gate/approval.ts";
export { ReplayGate } from "../gate/replay.ts";
export { APPROVAL_MODES, type ApprovalMode, isApprovalMode } from "../gate/modes.ts";
export type { AskUser } from "../gate/question.ts";
export { visible } from "../gate/preview.ts";
export { commandPrefix, isReadOnlyCommand } from "../gate/commands.ts";
