/**
 * The `mcp_servers:` entries: a stdio server (`command`, `args`, `env`, `cwd`) or a streamable
 * HTTP one (`url`, `headers`), with Trae Agent's spellings accepted. Only the user's config (or a
 * trusted folder's) sets them: config/trust.ts drops `mcp_servers` from an untrusted repository's
 * file, so no repository can start a program, least of all one that says `sandbox: none`.
 */
import { z } from "zod";

/** Where a stdio server runs, when its entry says (policy/process.ts `mcpServerLaunch`). */
export const MCP_SERVER_SANDBOXES = ["none", "read-only"] as const;

export const mcpServerSchema = z.strictObject({
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  /**
   * Left out, a stdio server runs in the session's sandbox, as the model's shell does (its
   * network the shell's: none, the `network:` list through Deft's proxy, or all with
   * `allow_network`). `read-only`: the same with the workspace read-only. `none`: outside, as
   * the user, with the user's network.
   */
  sandbox: z.enum(MCP_SERVER_SANDBOXES).optional(),
  url: z.string().optional(),
  // Trae Agent's spelling of `url`; read only here, folded into `url` below.
  http_url: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Seconds a call may take before it fails and the server is restarted. */
  timeout: z.number().positive().optional(),
  description: z.string().optional(),
  // Trae Agent's key; accepted so its configs load, and not acted on.
  trust: z.boolean().optional(),
}).transform(({ http_url, ...server }) =>
  http_url && !server.url ? { ...server, url: http_url } : server
);
