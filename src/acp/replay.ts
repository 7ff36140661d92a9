/**
 * A loaded session's conversation as the `session/update`s that show it in the editor (its
 * messages, each tool call and how it ended), masked.
 */
import type { LLMMessage, LLMToolCall } from "../llm/types.ts";
import type { CallEffect } from "../tools/base.ts";
import { effectsOf } from "../tools/catalog.ts";
import { normalizeToolName } from "../tools/executor.ts";
import { maskOutput } from "../policy/secrets.ts";
import { toolKind, toolTitle, type Update } from "./console.ts";

function argumentsOf(call: LLMToolCall): Record<string, unknown> {
  const args = call.arguments;
  return args !== null && typeof args === "object" && !Array.isArray(args)
    ? args as Record<string, unknown>
    : {};
}

/**
 * A loaded conversation as the updates that show it: the user's and the agent's messages, each
 * tool call and how it ended.
 */
export function replayUpdates(conversation: readonly LLMMessage[]): Update[] {
  const updates: Update[] = [];
  for (const message of conversation) {
    if (message.role === "user" && message.content.trim() !== "") {
      updates.push({
        sessionUpdate: "user_message_chunk",
        content: { type: "text", text: maskOutput(message.content) },
      });
    } else if (message.role === "assistant") {
      if (message.content.trim() !== "") {
        updates.push({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: maskOutput(message.content) },
        });
      }
      for (const call of message.tool_calls ?? []) {
        let effect: CallEffect | undefined;
        try {
          effect = effectsOf(normalizeToolName(call.name), argumentsOf(call));
        } catch {
          effect = undefined;
        }
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: call.call_id,
          title: maskOutput(toolTitle(call, effect)),
          kind: toolKind(call.name, effect),
          status: "pending",
          rawInput: call.arguments,
        });
      }
    } else if (message.role === "tool") {
      updates.push({
        sessionUpdate: "tool_call_update",
        toolCallId: message.call_id,
        status: message.is_error ? "failed" : "completed",
        content: message.content === ""
          ? []
          : [{ type: "content", content: { type: "text", text: maskOutput(message.content) } }],
      });
    }
  }
  return updates;
}
