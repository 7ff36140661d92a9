/**
 * The tool-call span, `execute_tool {name}`: the tool, the kind of effect the catalog gives the
 * call, whether it succeeded and the approval decision recorded for it. The shapes are structural
 * so this layer needs nothing from src/tools.
 */
import { withSpan } from "./tracing.ts";

/** What the span reads from a tool call's result. */
export interface TracedToolResult {
  success: boolean;
  error?: string | null;
  approval?: { decision: string; decided_by: string; asked: boolean };
}

/** Runs `run` (one tool call, approval included) inside an `execute_tool` span. */
export function traceToolCall<R extends TracedToolResult>(
  name: string,
  callId: string | undefined,
  effect: string | undefined,
  run: () => Promise<R>,
): Promise<R> {
  return withSpan(`execute_tool ${name}`, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": name,
    "gen_ai.tool.call.id": callId,
    "deft.tool.effect": effect,
  }, async (span) => {
    const result = await run();
    span.set({
      "deft.tool.success": result.success,
      "deft.approval.decision": result.approval?.decision,
      "deft.approval.decided_by": result.approval?.decided_by,
      "deft.approval.asked": result.approval?.asked,
    });
    if (!result.success) span.fail(result.error?.slice(0, 200) ?? "the tool call failed");
    return result;
  });
}
