/** `deft mcp` answers every invalid request that has an id, with the code JSON-RPC prescribes. */
import assert from "node:assert/strict";
import { ServerProcess } from "../../helpers/server_process.ts";
import { tempDir } from "../../helpers/temp.ts";

const INIT = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "test", version: "1" },
  },
};

Deno.test("invalid JSON-RPC messages get -32700, -32600 or -32602; notifications none", async () => {
  const dirTemp = await tempDir();
  const dir = dirTemp.path;
  const server = new ServerProcess(["mcp", "-w", dir]);
  try {
    await server.sendJson(INIT);
    assert.equal((await server.next()).id, "init");
    await server.sendJson({ jsonrpc: "2.0", method: "notifications/initialized" });
    const cases: [string, string | number | null, number][] = [
      ["this is not json", null, -32700],
      ['{"jsonrpc": "2.0", "id": 1, "method": ', null, -32700],
      ['{"jsonrpc": "2.0", "id": 2}', 2, -32600],
      ['{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": null}', 3, -32602],
      ['{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": [1, 2]}', 4, -32602],
      ['{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 7}}', 5, -32602],
      ['{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {}}', 6, -32602],
      ['{"id": 7, "method": "tools/list"}', 7, -32600],
      ['{"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}', null, -32600],
      ['{"jsonrpc": "2.0", "id": [8], "method": "ping"}', null, -32600],
      ['{"jsonrpc": "2.0", "id": 9, "method": 42}', 9, -32600],
      ["[]", null, -32600],
      ['[{"jsonrpc": "2.0", "id": 10, "method": "ping"}]', null, -32600],
      ['"just a string"', null, -32600],
      ["null", null, -32600],
      ['{"jsonrpc": "2.0", "id": 11, "method": "no/such/method"}', 11, -32601],
    ];
    for (const [line, id, code] of cases) {
      await server.send(line);
      const reply = await server.next(20_000);
      assert.equal(reply.jsonrpc, "2.0", line);
      assert.equal(reply.id, id, line);
      assert.equal(
        (reply.error as { code: number })?.code,
        code,
        `${line}: ${JSON.stringify(reply)}`,
      );
    }
    // Invalid notifications are not answered: the next line answered is the ping.
    await server.send('{"jsonrpc": "2.0", "method": "notifications/x", "params": null}');
    await server.send('{"jsonrpc": "2.0", "method": 5}');
    await server.sendJson({ jsonrpc: "2.0", id: "ping", method: "ping" });
    assert.equal((await server.next(20_000)).id, "ping");
    // And the server still runs tools.
    await server.sendJson({
      jsonrpc: "2.0",
      id: "bash",
      method: "tools/call",
      params: { name: "bash", arguments: { command: "echo still-here" } },
    });
    const bash = await server.next(30_000);
    assert.match(JSON.stringify(bash.result), /still-here/);
    assert.equal(await server.end(), 0);
  } finally {
    await dirTemp.remove();
  }
});

Deno.test("deft mcp: a deeply nested argument is a tool error, and the server goes on", async () => {
  const dirTemp = await tempDir();
  const dir = dirTemp.path;
  const server = new ServerProcess(["mcp", "-w", dir]);
  try {
    await server.sendJson(INIT);
    await server.next();
    for (const depth of [5_000, 100_000]) {
      await server.send(
        `{"jsonrpc": "2.0", "id": ${depth}, "method": "tools/call", "params": {"name": ` +
          `"json_edit_tool", "arguments": {"operation": "view", "file_path": "${dir}/a.json", ` +
          `"value": ${"[".repeat(depth)}${"]".repeat(depth)}}}}`,
      );
      const reply = await server.next(30_000);
      assert.equal(reply.id, depth);
      const result = reply.result as { isError: boolean; content: { text: string }[] };
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /nest more than 512 levels/);
    }
    await server.sendJson({
      jsonrpc: "2.0",
      id: "bash",
      method: "tools/call",
      params: { name: "bash", arguments: { command: "echo after-deep" } },
    });
    assert.match(JSON.stringify((await server.next(30_000)).result), /after-deep/);
    assert.equal(await server.end(), 0);
  } finally {
    await dirTemp.remove();
  }
});

Deno.test("deft mcp: a line over --max-line-bytes gets -32600 and the next request is answered", async () => {
  const dirTemp = await tempDir();
  const dir = dirTemp.path;
  const server = new ServerProcess(["mcp", "-w", dir, "--max-line-bytes", "2000"]);
  try {
    await server.sendJson(INIT);
    await server.next();
    await server.sendJson({
      jsonrpc: "2.0",
      id: 1,
      method: "ping",
      params: { pad: "x".repeat(5000) },
    });
    const refused = await server.next(20_000);
    assert.equal(refused.id, null);
    assert.equal((refused.error as { code: number }).code, -32600);
    assert.match((refused.error as { message: string }).message, /over the limit of 2000/);
    await server.sendJson({ jsonrpc: "2.0", id: 2, method: "ping" });
    assert.equal((await server.next(20_000)).id, 2);
    assert.equal(await server.end(), 0);
  } finally {
    await dirTemp.remove();
  }
});
