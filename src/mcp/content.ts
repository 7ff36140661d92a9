/**
 * Turns an MCP `tools/call` result into a Deft tool result. Text passes through; images, audio
 * and binary resources, which a text conversation cannot carry, become a one-line description; an
 * `isError` result becomes a failed result (Trae Agent counted it as a success).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types";
import { fail, ok, type ToolExecResult } from "../tools/base.ts";

/** `error_code` of a result the remote tool itself marked `isError`. */
export const REMOTE_ERROR_CODE = 1;

/** The Deft result for `result`, returned by `tool` on server `server` (named in messages). */
export function toToolResult(result: CallToolResult, server: string, tool: string): ToolExecResult {
  const parts = (result.content ?? []).map(describeBlock);
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent, null, 2));
  }
  const text = parts.join("\n");
  if (result.isError) {
    const message = text.trim() === ""
      ? `Tool '${tool}' of MCP server '${server}' reported an error without a message.`
      : text;
    return fail(message, REMOTE_ERROR_CODE);
  }
  return ok(text);
}

type Block = CallToolResult["content"][number];

function describeBlock(block: Block): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image: ${block.mimeType}, ${size(block.data)}]`;
    case "audio":
      return `[audio: ${block.mimeType}, ${size(block.data)}]`;
    case "resource_link": {
      const what = block.mimeType ? `, ${block.mimeType}` : "";
      return `[resource link: ${block.name} <${block.uri}>${what}]`;
    }
    case "resource": {
      const resource = block.resource;
      const type = resource.mimeType ? `, ${resource.mimeType}` : "";
      if ("text" in resource && typeof resource.text === "string") {
        return `[resource <${resource.uri}>${type}]\n${resource.text}`;
      }
      const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : "";
      return `[resource <${resource.uri}>${type}, ${size(blob)} of binary data]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/** The decoded size of base64 `data`, for people. */
function size(data: string): string {
  const bytes = Math.floor(data.replace(/=+$/, "").length * 3 / 4);
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
