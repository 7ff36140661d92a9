/**
 * The parameters of ACP requests, checked: a session's `cwd`, a prompt's content as the task
 * text, `session/set_model`'s; and a failure to open a session as the client reads it.
 */
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { TrajectoryRecorder } from "../trajectory/recorder.ts";

/** The cwd a session request names, checked: absolute, else an invalid-params error. */
export function checkedCwd(cwd: unknown): string {
  if (typeof cwd !== "string" || cwd === "") {
    throw acp.RequestError.invalidParams(
      { cwd },
      "cwd is missing: give the workspace as an absolute path",
    );
  }
  if (!isAbsolute(cwd)) {
    throw acp.RequestError.invalidParams(
      { cwd },
      `cwd '${cwd}' is relative: give the workspace as an absolute path`,
    );
  }
  return cwd;
}

/** A failure to open a session, as the client reads it. */
export function openError(e: unknown): acp.RequestError {
  if (e instanceof acp.RequestError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const name = e instanceof Error ? e.name : "";
  // A bad folder or flag is the request's problem; anything else is Deft's.
  return /UsageError|NotFound/.test(name)
    ? acp.RequestError.invalidParams(undefined, message)
    : acp.RequestError.internalError(undefined, message);
}

/** The parameters of `session/set_model`, checked. */
export function modelParams(params: unknown): { sessionId: string; modelId: unknown } {
  const p = (params ?? {}) as Record<string, unknown>;
  if (typeof p.sessionId !== "string") {
    throw acp.RequestError.invalidParams(undefined, "session/set_model needs a sessionId");
  }
  return { sessionId: p.sessionId, modelId: p.modelId };
}

/** The prompt's content as the task text of a turn. */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "resource_link":
        parts.push(`[${block.name}](${block.uri})`);
        break;
      case "resource": {
        const resource = block.resource as { uri: string; text?: string };
        if (typeof resource.text === "string") {
          parts.push(`<context uri="${resource.uri}">\n${resource.text}\n</context>`);
        } else parts.push(`(attached binary resource ${resource.uri}: not read)`);
        break;
      }
      default:
        throw acp.RequestError.invalidParams(
          { type: block.type },
          `Deft takes text, resource links and embedded text resources, not ${block.type}`,
        );
    }
  }
  return parts.join("\n");
}

/** Tokens a conversation's trajectory counts so far (0 before its first turn). */
export function usedTokens(recorder: TrajectoryRecorder | undefined): number {
  const usage = recorder?.data.total_usage;
  return usage ? usage.input_tokens + usage.output_tokens : 0;
}
