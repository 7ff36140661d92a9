/**
 * Sorts one line from an MCP client into a message for the server, or the JSON-RPC error the
 * line deserves. JSON-RPC 2.0 says every request gets an answer: a line that is not JSON gets
 * -32700 (parse error), one that is not a valid request -32600 (invalid request), a request whose
 * parameters do not fit its method -32602 (invalid params). The error carries the request's id
 * when one can be read, else null. Notifications are never answered, even invalid ones.
 */
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** What to do with a line. */
export type Intake =
  | { message: JSONRPCMessage }
  | { reply: JSONRPCMessage; problem: string }
  | { ignore: string };

type Schema = { safeParse(value: unknown): { success: boolean; error?: { issues: Issue[] } } };
interface Issue {
  path: PropertyKey[];
  message: string;
}

/** The methods whose parameters are checked here, so a bad call gets -32602. */
const PARAMS_SCHEMAS: Readonly<Record<string, Schema>> = {
  "initialize": InitializeRequestSchema,
  "ping": PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
};

/** Classifies one line (without its newline). */
export function intake(text: string): Intake {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return error(null, ErrorCode.ParseError, `Parse error: ${(e as Error).message}`);
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) {
    const message = parsed.data as JSONRPCMessage;
    if ("method" in message && "id" in message) {
      const schema = PARAMS_SCHEMAS[message.method];
      const check = schema?.safeParse({ method: message.method, params: message.params });
      if (check && !check.success) {
        return error(
          message.id,
          ErrorCode.InvalidParams,
          `Invalid params for ${message.method}: ${describe(check.error?.issues ?? [])}`,
        );
      }
    }
    return { message };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return error(
      null,
      ErrorCode.InvalidRequest,
      Array.isArray(value)
        ? "Invalid Request: batches are not supported; send one JSON-RPC object per line"
        : "Invalid Request: a JSON-RPC message is a JSON object",
    );
  }
  const object = value as Record<string, unknown>;
  const id = validId(object.id) ? object.id : null;
  const hasMethod = typeof object.method === "string";
  // A request object without an id is a notification, even an invalid one: never answered.
  if (!("id" in object) && "method" in object) {
    return { ignore: `ignored an invalid notification: ${describe(parsed.error.issues)}` };
  }
  if (id !== null && hasMethod && object.jsonrpc === "2.0" && "params" in object) {
    return error(
      id,
      ErrorCode.InvalidParams,
      "Invalid params: `params` must be an object (or left out)",
    );
  }
  return error(id, ErrorCode.InvalidRequest, `Invalid Request: ${describe(parsed.error.issues)}`);
}

function validId(id: unknown): id is string | number {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

function error(id: string | number | null, code: number, message: string): Intake {
  const reply = { jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage;
  return { reply, problem: message };
}

// Zod's issues, short: which field and what is wrong with it.
function describe(issues: readonly Issue[]): string {
  const shown = issues.slice(0, 3).map((issue) => {
    const where = issue.path.map(String).join(".");
    return where ? `${where}: ${issue.message}` : issue.message;
  });
  return shown.join("; ") || "not a JSON-RPC 2.0 request, notification or response";
}
