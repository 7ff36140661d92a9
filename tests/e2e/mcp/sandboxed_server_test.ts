/**
 * The MCP servers Deft starts run in the session's sandbox: a real stdio server (the SDK's, the
 * test's own script) started through `discoverMcpTools` under `workspace-write` with a network
 * list reaches the host the list allows through Deft's proxy, not the one it does not, and cannot
 * write outside the workspace; `sandbox: none` in its entry runs it outside, as the user.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { discoverMcpTools } from "../../../src/mcp/discover.ts";
import {
  closeNetworkProxies,
  type NetworkDecision,
  onNetworkDecision,
} from "../../../src/policy/network/mod.ts";
import { parseEntry } from "../../../src/policy/network/rules.ts";
import type { McpServerConfig } from "../../../src/config/schema.ts";
import type { ToolSettings } from "../../../src/tools/base.ts";
import { ToolExecutor } from "../../../src/tools/executor.ts";
import { tempDir } from "../../helpers/temp.ts";

const SERVER = new URL("../../fixtures/mcp/reach_server.ts", import.meta.url).pathname;

/** A server on 127.0.0.1 that answers `NAME PATH` and counts the requests it got. */
async function site(name: string) {
  let hits = 0;
  const srv = http.createServer((req, res) => {
    hits++;
    res.end(`${name} ${req.url}`);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  return {
    port,
    hits: () => hits,
    close: () => new Promise<void>((r) => srv.close(() => r())),
  };
}

async function world(entry: Partial<McpServerConfig> = {}) {
  const root = await tempDir("deft-mcp-sandbox-");
  const workspace = `${root.path}/ws`;
  const outside = `${root.path}/outside`;
  await Deno.mkdir(workspace);
  await Deno.mkdir(outside);
  const good = await site("good");
  const evil = await site("evil");
  // Loopback addresses need an entry of their own: the list names the allowed server's.
  const settings: ToolSettings = {
    sandbox: "workspace-write",
    network: { allow: [parseEntry(`127.0.0.1:${good.port}`)], deny: [] },
  };
  const mcp = await discoverMcpTools(
    {
      mcp_servers: { reach: { command: Deno.execPath(), args: ["run", "-A", SERVER], ...entry } },
      allow_mcp_servers: ["reach"],
    },
    { provider: "openai", workspace, settings },
  );
  assert.deepEqual(mcp.errors, []);
  const executor = new ToolExecutor(mcp.tools);
  const call = async (name: string, args: Record<string, string>) => {
    const r = await executor.executeToolCall({
      name: `mcp__reach__${name}`,
      call_id: "c",
      arguments: args,
    });
    return r.output ?? r.error ?? "";
  };
  return {
    workspace,
    outside,
    good,
    evil,
    settings,
    call,
    async [Symbol.asyncDispose]() {
      await executor.closeTools();
      await mcp.close();
      await closeNetworkProxies();
      await good.close();
      await evil.close();
      await root.remove();
    },
  };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("a sandboxed MCP server reaches only what the network list allows, through the proxy", async () => {
  await using w = await world();
  const seen: NetworkDecision[] = [];
  const unsubscribe = onNetworkDecision((d) => seen.push(d));
  try {
    assert.equal(
      await w.call("fetch", { url: `http://127.0.0.1:${w.good.port}/ok` }),
      "200 good /ok",
    );
    // Deno's fetch takes ALL_PROXY first: it is the HTTP proxy's, so the refusal says why.
    const denied = await w.call("fetch", { url: `http://127.0.0.1:${w.evil.port}/leak` });
    assert.match(denied, /^403 Blocked by Deft: 127\.0\.0\.1:\d+ /, denied);
  } finally {
    unsubscribe();
  }
  assert.deepEqual(
    seen.map((d) => [d.host, d.port, d.allowed, d.reason.split(" (")[0]]),
    [
      ["127.0.0.1", w.good.port, true, "allowed"],
      ["127.0.0.1", w.evil.port, false, `port ${w.evil.port} not allowed`],
    ],
  );
  assert.equal(w.evil.hits(), 0, "the denied server was never reached");
  // The proxy was started for the session's list, and the server went through it.
  assert.ok(w.settings.networkProxy, "the proxy's socket is recorded in the settings");
});

Deno.test("a sandboxed MCP server writes the workspace, and nothing outside it", async () => {
  await using w = await world();
  assert.equal(await w.call("write", { path: `${w.workspace}/in.txt`, text: "x" }), "written");
  assert.equal(await Deno.readTextFile(`${w.workspace}/in.txt`), "x");
  const out = await w.call("write", { path: `${w.outside}/out.txt`, text: "x" });
  assert.equal(await exists(`${w.outside}/out.txt`), false, out);
  const home = await w.call("write", { path: `${w.workspace}/../escape.txt`, text: "x" });
  assert.equal(await exists(`${w.workspace}/../escape.txt`), false, home);
});

Deno.test("sandbox: read-only keeps even the workspace read-only for that server", async () => {
  await using w = await world({ sandbox: "read-only" });
  const out = await w.call("write", { path: `${w.workspace}/in.txt`, text: "x" });
  assert.match(out, /^error: .*(Read-only|read-only)/i, out);
  assert.equal(await exists(`${w.workspace}/in.txt`), false);
});

Deno.test("sandbox: none runs the server outside, as the user, with the user's network", async () => {
  await using w = await world({ sandbox: "none" });
  assert.equal(await w.call("fetch", { url: `http://127.0.0.1:${w.evil.port}/x` }), "200 evil /x");
  assert.equal(await w.call("write", { path: `${w.outside}/out.txt`, text: "x" }), "written");
  assert.equal(w.settings.networkProxy, undefined, "no proxy for a server that runs outside");
});

Deno.test("a sandboxed server whose program is missing says so before bubblewrap starts", async () => {
  await using root = await tempDir();
  const mcp = await discoverMcpTools(
    { mcp_servers: { ghost: { command: "/no/such/mcp-server" } }, allow_mcp_servers: ["ghost"] },
    { provider: "openai", workspace: root.path, settings: { sandbox: "workspace-write" } },
  );
  await mcp.close();
  assert.deepEqual(mcp.errors, [
    "MCP server 'ghost' the command '/no/such/mcp-server' was not found (is it installed and on PATH?)",
  ]);
});

Deno.test("a server whose script and cwd are under /tmp sees them, read-only, in the sandbox", async () => {
  await using root = await tempDir("deft-mcp-tmp-");
  const workspace = `${root.path}/ws`;
  const srv = `${root.path}/srv`;
  await Deno.mkdir(workspace);
  await Deno.mkdir(srv);
  // The script lies outside the workspace, in the /tmp the sandbox replaces with its own.
  const script = `${root.path}/server.ts`;
  await Deno.writeTextFile(script, `import ${JSON.stringify(new URL(SERVER, "file:").href)};\n`);
  const config = new URL("../../../deno.json", import.meta.url).pathname;
  const mcp = await discoverMcpTools(
    {
      mcp_servers: {
        reach: {
          command: Deno.execPath(),
          args: ["run", "-A", "--config", config, script],
          cwd: srv,
        },
      },
      allow_mcp_servers: ["reach"],
    },
    { provider: "openai", workspace, settings: { sandbox: "workspace-write" } },
  );
  const executor = new ToolExecutor(mcp.tools);
  try {
    assert.deepEqual(mcp.errors, []);
    const r = await executor.executeToolCall({
      name: "mcp__reach__write",
      call_id: "c",
      arguments: { path: `${srv}/x.txt`, text: "x" },
    });
    // Shown, but read-only: the server started there and cannot write it.
    assert.match(r.error ?? r.output ?? "", /^error: .*(Read-only|read-only)/i);
    assert.equal(await exists(`${srv}/x.txt`), false);
  } finally {
    await executor.closeTools();
    await mcp.close();
  }
});
