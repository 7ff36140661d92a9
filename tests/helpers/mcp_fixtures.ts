/** Fixture MCP servers for the client tests: configs for the stdio one, a launcher for HTTP. */
import type { McpServerConfig } from "../../src/config/schema.ts";
import type { ToolContext } from "../../src/tools/base.ts";

const FIXTURES = new URL("../fixtures/mcp/", import.meta.url).pathname;

/** Config of the stdio fixture server, with extra command-line flags and settings. */
export function stdioFixture(
  flags: string[] = [],
  extra: Partial<McpServerConfig> = {},
): McpServerConfig {
  return {
    command: Deno.execPath(),
    args: ["run", "-A", `${FIXTURES}stdio_server.ts`, ...flags],
    ...extra,
  };
}

/** A context for MCP tools rooted at `workspace`. */
export function mcpContext(workspace: string, provider = "openai"): ToolContext {
  return { provider, workspace, settings: {} };
}

/** A running HTTP fixture server. */
export interface HttpFixture {
  port: number;
  url: string;
  /** Resolves when the server process has exited. */
  exited: Promise<Deno.CommandStatus>;
  stop(): Promise<void>;
}

/** Starts the HTTP fixture on 127.0.0.1 (`port` 0: a free one) and waits until it listens. */
export async function startHttpFixture(
  options: { port?: number; token?: string } = {},
): Promise<HttpFixture> {
  const args = ["run", "-A", `${FIXTURES}http_server.ts`, "--port", String(options.port ?? 0)];
  if (options.token) args.push("--token", options.token);
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let match: RegExpMatchArray | null = null;
  while (!(match = text.match(/listening on (\d+)/))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the HTTP fixture exited before listening: ${text}`);
    text += value;
  }
  // Keep draining stdout so the server never blocks on a full pipe.
  const drained = (async () => {
    while (!(await reader.read()).done) { /* discard */ }
  })();
  const port = Number(match[1]);
  const exited = child.status.then(async (status) => {
    await drained;
    return status;
  });
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    exited,
    stop: async () => {
      try {
        child.kill();
      } catch {
        // Exited already.
      }
      await exited;
    },
  };
}

/** A TCP port nothing listens on (bound, then released). */
export function unusedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** True while process `pid` exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  // `ps` rather than /proc: Deno wants --allow-all to read /proc, and the test task does not
  // grant it. A zombie counts as gone.
  const out = new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).outputSync();
  const state = new TextDecoder().decode(out.stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

/** Waits up to `ms` for `check` to hold. */
export async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}
