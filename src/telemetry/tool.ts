/**
 * The tool-call span, `execute_tool {name}`: the tool, the kind of effect the catalog gives the
 * call, whether it succeeded and the approval decision recorded for it. A failed call's status
 * holds an error kind from a fixed vocabulary and its code, never the error's text; the text and
 * the output go on the span only when the user opted in to content. The shapes are structural so
 * this layer needs nothing from src/tools.
 */
import { contentCaptured, label, withSpan } from "./tracing.ts";

/** What the span reads from a tool call's result. */
export interface TracedToolResult {
  success: boolean;
  /** Read only with the content opt-in. */
  output?: string | null;
  /** Read only with the content opt-in. */
  error?: string | null;
  /** 0 for success; a command's exit status; negative for a call Deft refused or could not run. */
  error_code?: number;
  approval?: { decision: string; decided_by: string; asked: boolean };
}

/** The error kinds a failed tool span may carry: the whole vocabulary. */
export type ToolErrorKind = "refused" | "exit_status" | "tool_error";

/**
 * Why a call failed, from the result's fields alone: refused before it ran, a command that exited
 * non-zero, or any other failure of the tool or its call.
 */
export function toolErrorKind(result: TracedToolResult): ToolErrorKind {
  if (result.approval?.decision === "deny") return "refused";
  if (typeof result.error_code === "number" && result.error_code > 0) return "exit_status";
  return "tool_error";
}

/** Longest tool output put on a span with the content opt-in. */
const MAX_RESULT = 16_384;

/**
 * Runs `run` (one tool call, approval included) inside an `execute_tool` span: under the run or
 * turn that made it, or on its own (with an inbound `TRACEPARENT` as parent) for a call from a
 * tool server's client.
 */
export function traceToolCall<R extends TracedToolResult>(
  name: string,
  callId: string | undefined,
  effect: string | undefined,
  run: () => Promise<R>,
): Promise<R> {
  // The name and id come from the model; only identifier-shaped ones are put on the span.
  const tool = label(name) ?? "unknown";
  return withSpan(`execute_tool ${tool}`, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": tool,
    "gen_ai.tool.call.id": label(callId),
    "deft.tool.effect": label(effect),
  }, async (span) => {
    const result = await run();
    span.set({
      "deft.tool.success": result.success,
      "deft.approval.decision": label(result.approval?.decision),
      "deft.approval.decided_by": label(result.approval?.decided_by),
      "deft.approval.asked": result.approval?.asked,
    });
    if (contentCaptured() && typeof result.output === "string") {
      span.set({ "gen_ai.tool.call.result": result.output.slice(0, MAX_RESULT) });
    }
    if (!result.success) {
      const kind = toolErrorKind(result);
      span.set({ "error.type": kind, "deft.tool.error_code": result.error_code });
      // The error's text reaches the status only with the content opt-in (`fail` sees to it).
      span.fail(kind, result.error ?? undefined);
    }
    return result;
    // A root span: `deft serve` and `deft mcp` run calls outside any run, and the first call
    // there is what loads the tracing API. Inside a run or turn the call is that span's child.
  }, { root: true });
}
