import assert from "node:assert/strict";
import { discoverMcpTools } from "../../../src/mcp/discover.ts";
import type { McpServerConfig } from "../../../src/config/schema.ts";
import { type ToolCallResult, ToolExecutor } from "../../../src/tools/executor.ts";
import {
  type HttpFixture,
  mcpContext,
  startHttpFixture,
  unusedPort,
} from "../../helpers/mcp_fixtures.ts";

const TOKEN = "s3cret";

async function withHttp(
  run: (executor: ToolExecutor, server: HttpFixture) => Promise<HttpFixture | void>,
  extra: Partial<McpServerConfig> = {},
) {
  let server = await startHttpFixture({ token: TOKEN });
  const mcp = await discoverMcpTools({
    mcp_servers: {
      web: { url: server.url, headers: { Authorization: `Bearer ${TOKEN}` }, ...extra },
    },
    allow_mcp_servers: ["web"],
  }, mcpContext("/tmp"));
  assert.deepEqual(mcp.errors, []);
  const executor = new ToolExecutor(mcp.tools);
  try {
    server = await run(executor, server) ?? server;
  } finally {
    await executor.closeTools();
    await server.stop();
  }
}

function call(executor: ToolExecutor, name: string, args: unknown = {}): Promise<ToolCallResult> {
  return executor.executeToolCall({ name: `mcp__web__${name}`, call_id: "t", arguments: args });
}

Deno.test("an HTTP server's tools are listed and called, with the configured headers", async () => {
  await withHttp(async (executor) => {
    assert.ok(executor.find("mcp__web__echo"));
    const echo = await call(executor, "echo", { text: "over http", times: 1 });
    assert.deepEqual([echo.success, echo.output], [true, "over http"]);
    const failed = await call(executor, "fail");
    assert.deepEqual([failed.success, failed.error], [false, "the fixture failed on purpose"]);
    assert.notEqual(failed.error_code, 0);
  });
});

Deno.test("HTTP start-up failures name the status or the unreachable address", async () => {
  const server = await startHttpFixture({ token: TOKEN });
  const port = unusedPort();
  try {
    const mcp = await discoverMcpTools({
      mcp_servers: {
        noauth: { url: server.url },
        down: { url: `http://127.0.0.1:${port}/mcp` },
        garbage: { url: "not a url" },
      },
      allow_mcp_servers: ["noauth", "down", "garbage"],
    }, mcpContext("/tmp"));
    assert.equal(mcp.errors.length, 3, mcp.errors.join("\n"));
    assert.match(
      mcp.errors[0],
      /^MCP server 'noauth' answered HTTP 401 at http:\/\/127\.0\.0\.1:\d+\/mcp \(check its 'headers'\)/,
    );
    assert.match(
      mcp.errors[1],
      new RegExp(
        `^MCP server 'down' could not be reached at http://127.0.0.1:${port}/mcp: .*refused`,
      ),
    );
    assert.equal(mcp.errors[2], "MCP server 'garbage' has an invalid url 'not a url'");
    assert.deepEqual(mcp.tools, []);
    await mcp.close();
  } finally {
    await server.stop();
  }
});

Deno.test("an HTTP server that dies mid-call fails the call at once; Deft reconnects", async () => {
  await withHttp(async (executor, server) => {
    const started = Date.now();
    const crashed = await call(executor, "crash");
    // The call's timeout is 30 s; a dead server must fail it well before (slack for load).
    assert.ok(Date.now() - started < 15_000, "the call waited for its timeout");
    assert.equal(crashed.success, false);
    assert.match(
      crashed.error!,
      /^MCP server 'web' lost its connection \(.+\) during the call to 'crash'\. Deft will reconnect on the next call\.$/,
    );
    await server.exited;

    const down = await call(executor, "echo", { text: "x" });
    assert.equal(down.success, false);
    assert.match(
      down.error!,
      /^MCP server 'web' could not be reached at .*\(while reconnecting for a call to 'echo'\)$/,
    );

    const revived = await startHttpFixture({ port: server.port, token: TOKEN });
    const echo = await call(executor, "echo", { text: "again" });
    assert.deepEqual([echo.success, echo.output, echo.error], [true, "again", null]);
    return revived;
  }, { timeout: 30 });
});

Deno.test("an HTTP call past the timeout fails; the next call opens a new session", async () => {
  await withHttp(async (executor) => {
    const before = JSON.parse((await call(executor, "pid")).output!);
    const hung = await call(executor, "hang");
    assert.equal(hung.success, false);
    assert.equal(
      hung.error,
      "MCP server 'web' did not answer the call to 'hang' within 0.5 s; the call was abandoned. " +
        "Deft will reconnect on the next call.",
    );
    const after = JSON.parse((await call(executor, "pid")).output!);
    assert.equal(after.pid, before.pid, "same server process");
    assert.equal(after.calls, 1, "a new session (the fixture counts calls per session)");
  }, { timeout: 0.5 });
});
