/** Deft's MCP client against Deft's MCP server: both directions of issue 7 in one test. */
import assert from "node:assert/strict";
import { discoverMcpTools } from "../../../src/mcp/discover.ts";
import { ToolExecutor } from "../../../src/tools/executor.ts";
import { createTools, servedToolNames } from "../../../src/tools/registry.ts";
import { deftMcpCommand } from "../../helpers/deft_mcp.ts";
import { mcpContext } from "../../helpers/mcp_fixtures.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("deft's tools, served by deft mcp and used through deft's MCP client", async () => {
  await using workspaceDir = await tempDir();
  const workspace = workspaceDir.path;
  const mcp = await discoverMcpTools(
    { mcp_servers: { deft: deftMcpCommand(["-w", workspace]) }, allow_mcp_servers: ["deft"] },
    mcpContext(workspace),
  );
  const executor = new ToolExecutor(mcp.tools);
  try {
    assert.deepEqual(mcp.errors, []);
    assert.deepEqual(
      mcp.tools.map((t) => t.name),
      servedToolNames().map((n) => `mcp__deft__${n}`),
    );

    // The strict rendering of a schema that went through MCP matches Deft's own rendering.
    const builtIns = createTools(mcpContext(workspace), servedToolNames());
    for (const [i, builtIn] of builtIns.entries()) {
      const direct = builtIn.jsonDefinition("openai");
      const viaMcp = mcp.tools[i].jsonDefinition("openai");
      assert.equal(viaMcp.strict, direct.strict, builtIn.name);
      if (direct.strict) assert.deepEqual(viaMcp.parameters, direct.parameters, builtIn.name);
    }

    const done = await executor.executeToolCall({
      name: "mcp__deft__task_done",
      call_id: "1",
      arguments: {},
    });
    assert.deepEqual([done.success, done.output], [true, "Task done."]);
    const refused = await executor.executeToolCall({
      name: "mcp__deft__str_replace_based_edit_tool",
      call_id: "2",
      arguments: { command: "view", path: "/etc/passwd", view_range: null, file_text: null },
    });
    assert.equal(refused.success, false);
    assert.notEqual(refused.error_code, 0);
  } finally {
    await executor.closeTools();
    await mcp.close();
  }
});
