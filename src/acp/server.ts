/**
 * `deft acp`'s protocol side: an Agent Client Protocol agent on the official SDK
 * (`@agentclientprotocol/sdk`), newline-delimited JSON-RPC over a pair of streams. Each ACP session
 * is a Deft session opened by the command (the same assembly as `deft interactive`: sandbox,
 * shell environment, masking, repository trust, tool host, trajectory); a prompt is one turn of
 * its conversation, run by `runTask`. Only protocol glue lives here: the loop is src/agent's.
 */
import * as acp from "@agentclientprotocol/sdk";
import { AcpAgent } from "./agent.ts";
import type { AcpHost } from "./host.ts";
import { modelParams } from "./requests.ts";

export type { AcpHost, AcpSessionIO, LoadedConversation } from "./host.ts";
// The connection's stream (over-size messages are answered, not fatal); the command builds it.
export { acpStream } from "./stream.ts";
export { replayUpdates } from "./replay.ts";
export { promptText } from "./requests.ts";

/** Builds the agent app; `connect` it to a stream. Each request is answered by `AcpAgent`. */
export function deftAgent(host: AcpHost): { app: acp.AgentApp; closeAll(): Promise<void> } {
  const agent = new AcpAgent(host);
  const app = acp.agent({ name: "deft" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => agent.initialize(params))
    .onRequest(
      acp.methods.agent.session.new,
      ({ params, client }) => agent.newSession(params, client),
    )
    .onRequest(
      acp.methods.agent.session.load,
      ({ params, client }) => agent.loadSession(params, client),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) => agent.listSessions(params))
    .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
      agent.setMode(params.sessionId, params.modeId);
      return {};
    })
    .onRequest(
      acp.methods.agent.session.setConfigOption,
      ({ params }) => agent.setConfigOption(params),
    )
    // The model as clients before config options set it (`session/set_model`).
    .onRequest("session/set_model", modelParams, async ({ params }) => {
      await agent.setModel(params.sessionId, params.modelId);
      return {};
    })
    .onRequest(
      acp.methods.agent.session.prompt,
      ({ params, client }) => agent.prompt(params, client),
    )
    .onNotification(
      acp.methods.agent.session.cancel,
      ({ params }) => agent.cancel(params.sessionId),
    );
  return { app, closeAll: () => agent.closeAll() };
}
