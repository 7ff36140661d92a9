/**
 * A loaded session's conversation as the `session/update`s that show it in the editor (its
 * messages, each tool call and how it ended), masked.
 */
import type { LLMMessage } from "../llm/types.ts";
import { describeCall } from "../tools/catalog.ts";
import { maskOutput } from "../policy/secrets.ts";
import type { Update } from "./console.ts";

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
        const description = describeCall(call.name, call.arguments);
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: call.call_id,
          title: maskOutput(description.title),
          kind: description.kind,
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
