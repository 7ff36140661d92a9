/**
 * `deft serve` and `deft mcp` have no agent session, so they do not offer the Task tool (its
 * stand-in could only answer an error there): neither lists it, and a call of it is an unknown
 * tool whose error names the tools that are offered.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { runDeft } from "../../helpers/deft.ts";
import { deftMcpCommand } from "../../helpers/deft_mcp.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("deft serve does not offer the Task tool: a call of it is an unknown tool", async () => {
  await using workspace = await tempDir();
  const call = { id: 1, name: "Task", arguments: { description: "d", prompt: "p" } };
  const run = await runDeft(["serve", "-w", workspace.path], {
    stdin: JSON.stringify(call) + "\n",
  });
  assert.equal(run.code, 0, run.stderr);
  const reply = JSON.parse(run.stdout.trim());
  assert.equal(reply.success, false);
  assert.match(reply.error, /^Tool 'Task' not found\. Available tools: \[/);
  const offered = /\[(.*)\]/.exec(reply.error)![1].split(", ");
  assert.ok(offered.includes("bash") && offered.includes("task_done"), reply.error);
  assert.ok(!offered.includes("Task"), reply.error);
});

Deno.test({
  name: "deft mcp does not list the Task tool, and a call of it is an unknown tool",
  // The SDK's stdio transport drives the child through Node's child_process.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using workspace = await tempDir();
    const client = new Client({ name: "deft-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        ...deftMcpCommand(["-w", workspace.path]),
        env: { ...Deno.env.toObject(), NO_COLOR: "1" },
        stderr: "pipe",
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("bash") && names.includes("task_done"), names.join(", "));
      assert.ok(!names.includes("Task"), names.join(", "));
      const result = await client.callTool({
        name: "Task",
        arguments: { description: "d", prompt: "p" },
      }).then((r) => r as CallToolResult, (e: Error) => ({ isError: true, error: e.message }));
      assert.equal(result.isError, true);
      assert.match(JSON.stringify(result), /Task' not found/);
    } finally {
      await client.close();
    }
  },
});
