import assert from "node:assert/strict";
import { McpConnection } from "../../../src/mcp/client.ts";
import { discoverMcpTools } from "../../../src/mcp/discover.ts";
import { McpTool } from "../../../src/mcp/tool.ts";
import { type ToolCallResult, ToolExecutor } from "../../../src/tools/executor.ts";
import { eventually, mcpContext, processAlive, stdioFixture } from "../../helpers/mcp_fixtures.ts";
import { tempDir } from "../../helpers/temp.ts";

async function withFixture(
  run: (executor: ToolExecutor, tools: McpTool[], workspace: string) => Promise<void> | void,
  config = stdioFixture(),
) {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  await Deno.mkdir(`${workspace}/sub`); // for servers configured with a relative cwd
  const mcp = await discoverMcpTools(
    { mcp_servers: { fx: config }, allow_mcp_servers: ["fx"] },
    mcpContext(workspace),
  );
  assert.deepEqual(mcp.errors, []);
  const executor = new ToolExecutor(mcp.tools);
  try {
    await run(executor, mcp.tools, workspace);
  } finally {
    await executor.closeTools();
    await mcp.close();
  }
}

function call(executor: ToolExecutor, name: string, args: unknown = {}): Promise<ToolCallResult> {
  return executor.executeToolCall({ name: `mcp__fx__${name}`, call_id: "t", arguments: args });
}

async function serverPid(executor: ToolExecutor): Promise<number> {
  const result = await call(executor, "pid");
  assert.ok(result.success, result.error ?? "");
  return JSON.parse(result.output!).pid;
}

Deno.test("only allowed servers start, and their tools join under the mcp__ prefix", async () => {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const marker = `${workspace}/started`;
  const mcp = await discoverMcpTools({
    mcp_servers: {
      fx: stdioFixture(),
      other: { command: "touch", args: [marker] },
    },
    allow_mcp_servers: ["fx"],
  }, mcpContext(workspace));
  try {
    assert.deepEqual(mcp.errors, []);
    assert.deepEqual(mcp.tools.map((t) => t.name), [
      "mcp__fx__echo",
      "mcp__fx__pid",
      "mcp__fx__fail",
      "mcp__fx__crash",
      "mcp__fx__hang",
      "mcp__fx__media",
      "mcp__fx__args",
      "mcp__fx__label",
      "mcp__fx__env",
      "mcp__fx__cwd",
      "mcp__fx__roots",
      "mcp__fx__structured",
    ]);
    const echo = mcp.tools[0];
    assert.ok(echo instanceof McpTool);
    assert.equal(echo.serverName, "fx");
    assert.equal(echo.remoteName, "echo");
    assert.equal(echo.description, "Echoes `text`, `times` times.");
    assert.equal(await Deno.stat(marker).then(() => true, () => false), false);
  } finally {
    await mcp.close();
  }
});

Deno.test("calls return text, isError becomes a failure, other content is described", async () => {
  await withFixture(async (executor) => {
    const echo = await call(executor, "echo", { text: "ab", times: 3 });
    assert.deepEqual(
      [echo.success, echo.output, echo.error, echo.error_code],
      [true, "ababab", null, 0],
    );

    const failed = await call(executor, "fail");
    assert.equal(failed.success, false);
    assert.equal(failed.error, "the fixture failed on purpose");
    assert.notEqual(failed.error_code, 0);

    const media = await call(executor, "media");
    assert.ok(media.success);
    assert.match(media.output!, /^here is a picture\n\[image: image\/png, 2\.9 KB\]\n/);
    assert.match(
      media.output!,
      /\[resource <file:\/\/\/tmp\/notes\.txt>, text\/plain\]\nthe notes/,
    );

    const structured = await call(executor, "structured");
    assert.equal(structured.output, '{\n  "answer": 42\n}');

    const missing = await call(executor, "echo", {});
    assert.match(missing.error!, /missing required argument `text`/);
  });
});

Deno.test("schemas pass through to the provider; openai gets strict mode where possible", async () => {
  await withFixture((_executor, tools) => {
    const args = tools.find((t) => t.remoteName === "args")!;
    const anthropic = args.jsonDefinition("anthropic");
    assert.equal(anthropic.strict, undefined);
    const { $schema: _, ...withoutDialect } = args.inputSchema;
    assert.deepEqual(anthropic.parameters, withoutDialect);

    const openai = args.jsonDefinition("openai");
    assert.equal(openai.name, "mcp__fx__args");
    assert.equal(openai.strict, true);
    assert.deepEqual(openai.parameters.required, ["query", "limit", "filter", "tags", "cursor"]);
    assert.equal(openai.parameters.additionalProperties, false);

    const label = tools.find((t) => t.remoteName === "label")!.jsonDefinition("openai");
    assert.equal(label.strict, false);
    assert.deepEqual(label.parameters.properties, {
      target: { type: "string" },
      labels: { type: "object", additionalProperties: { type: "string" } },
    });
  });
});

Deno.test("arguments in strict-mode form reach the server in the form its schema wants", async () => {
  await withFixture(async (executor) => {
    const result = await call(executor, "args", {
      query: "q",
      limit: null,
      filter: { kind: "file", owner: null },
      tags: null,
      cursor: null,
    });
    assert.ok(result.success, result.error ?? "");
    assert.deepEqual(JSON.parse(result.output!), {
      query: "q",
      filter: { kind: "file" },
      cursor: null,
    });
    const label = await call(executor, "label", { target: "x", labels: { a: "1", b: "2" } });
    assert.deepEqual(JSON.parse(label.output!), { target: "x", labels: { a: "1", b: "2" } });
  });
});

Deno.test("a server that crashes mid-call fails that call and is restarted on the next", async () => {
  await withFixture(async (executor) => {
    const before = await serverPid(executor);
    const crashed = await call(executor, "crash");
    assert.equal(crashed.success, false);
    assert.equal(
      crashed.error,
      "MCP server 'fx' exited with code 3 during the call to 'crash'. " +
        "The server will be restarted on the next call.\n" +
        "Its stderr ended with:\nfixture: crashing on purpose",
    );
    assert.equal(processAlive(before), false);
    const after = await serverPid(executor);
    assert.notEqual(after, before);
    const echo = await call(executor, "echo", { text: "back" });
    assert.equal(echo.output, "back");
  });
});

Deno.test("a call past the timeout fails; the hung server is stopped and restarted", async () => {
  await withFixture(async (executor) => {
    const before = await serverPid(executor);
    const started = Date.now();
    const hung = await call(executor, "hang");
    const took = Date.now() - started;
    assert.equal(hung.success, false);
    assert.equal(
      hung.error,
      "MCP server 'fx' did not answer the call to 'hang' within 0.5 s; the call was abandoned. " +
        "The server will be restarted on the next call.",
    );
    assert.ok(took >= 450 && took < 15_000, `took ${took} ms`);
    assert.ok(await eventually(() => !processAlive(before)), "the hung server was stopped");
    const after = await serverPid(executor);
    assert.notEqual(after, before);
  }, stdioFixture([], { timeout: 0.5 }));
});

Deno.test("calls in flight when the server dies all fail; the restart happens once", async () => {
  await withFixture(async (executor) => {
    const results = await Promise.all([call(executor, "hang"), call(executor, "crash")]);
    for (const result of results) {
      assert.equal(result.success, false);
      assert.match(result.error!, /exited with code 3 during the call to '(hang|crash)'/);
    }
    const pids = await Promise.all([serverPid(executor), serverPid(executor)]);
    assert.equal(pids[0], pids[1]);
  });
});

Deno.test("start-up failures are reported once each and the good servers still work", async () => {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const mcp = await discoverMcpTools({
    mcp_servers: {
      fx: stdioFixture(),
      missing_cmd: { command: "deft-no-such-command" },
      broken: stdioFixture(["--fail-start"]),
      both: { command: "x", url: "http://127.0.0.1:1/mcp" },
      neither: {},
      bad_cwd: stdioFixture([], { cwd: "/no/such/dir" }),
    },
    allow_mcp_servers: [
      "missing_cmd",
      "broken",
      "fx",
      "undefined_one",
      "both",
      "neither",
      "bad_cwd",
    ],
  }, mcpContext(workspace));
  try {
    assert.deepEqual(mcp.errors, [
      "MCP server 'undefined_one' is listed in allow_mcp_servers but not defined under " +
      "mcp_servers; it was not started.",
      "MCP server 'both' has both 'command' and 'url'; give 'command' for a stdio server or " +
      "'url' for HTTP; it was not started.",
      "MCP server 'neither' has neither 'command' (stdio) nor 'url' (streamable HTTP); it was " +
      "not started.",
      "MCP server 'missing_cmd' could not be started: the command 'deft-no-such-command' was " +
      "not found (is it installed and on PATH?)",
      "MCP server 'broken' exited with code 4 during start-up\n" +
      "Its stderr ended with:\nfixture: cannot start, the database is missing",
      "MCP server 'bad_cwd' could not be started: its working directory /no/such/dir does " +
      "not exist",
    ]);
    assert.ok(mcp.tools.length > 0);
    assert.ok(mcp.tools.every((t) => t.serverName === "fx"));
    const echo = await mcp.tools[0].execute({ text: "still here" });
    assert.equal(echo.output, "still here");
  } finally {
    await mcp.close();
  }
});

Deno.test("stdio servers start in the workspace, which is their root, with a clean env", async () => {
  Deno.env.set("DEFT_TEST_SECRET", "hunter2");
  try {
    await withFixture(async (executor, _tools, workspace) => {
      const secret = await call(executor, "env", { name: "DEFT_TEST_SECRET" });
      assert.equal(secret.output, "(unset)");
      const given = await call(executor, "env", { name: "FIXTURE_VAR" });
      assert.equal(given.output, "from config");
      const path = await call(executor, "env", { name: "PATH" });
      assert.equal(path.output, Deno.env.get("PATH"));
      const cwd = await call(executor, "cwd");
      assert.equal(cwd.output, `${workspace}/sub`);
      const roots = await call(executor, "roots");
      assert.deepEqual(JSON.parse(roots.output!), [
        { uri: `file://${workspace}`, name: workspace.split("/").pop() },
      ]);
    }, stdioFixture([], { env: { FIXTURE_VAR: "from config" }, cwd: "sub" }));
  } finally {
    Deno.env.delete("DEFT_TEST_SECRET");
  }
});

Deno.test("closing stops the server and the processes it started; later calls fail", async () => {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  let stderr = "";
  const connection = new McpConnection("fx", stdioFixture(["--spawn-child"]), {
    workspace,
    onStderr: (_server, text) => stderr += text,
  });
  try {
    await connection.listTools();
    const serverPid = connection.pid!;
    assert.ok(await eventually(() => /child (\d+)/.test(stderr)), stderr);
    const childPid = Number(stderr.match(/child (\d+)/)![1]);
    assert.ok(processAlive(serverPid) && processAlive(childPid));
    await connection.close();
    assert.equal(processAlive(serverPid), false);
    assert.ok(await eventually(() => !processAlive(childPid)), "the server's child was stopped");
    const after = await connection.callTool("echo", { text: "x" });
    assert.deepEqual(after, { output: null, error: "MCP server 'fx' is closed.", error_code: -1 });
  } finally {
    await connection.close();
  }
});

Deno.test("a server that writes stray lines to stdout still works", async () => {
  await withFixture(async (executor) => {
    const echo = await call(executor, "echo", { text: "fine" });
    assert.equal(echo.output, "fine");
  }, stdioFixture(["--stdout-noise"]));
});

Deno.test("a server that never finishes the handshake is reported and stopped", async () => {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const mcp = await discoverMcpTools(
    {
      mcp_servers: { mute: { command: "sleep", args: ["987654"], timeout: 0.5 } },
      allow_mcp_servers: ["mute"],
    },
    mcpContext(workspace),
    { minStartupSeconds: 0.5 },
  );
  try {
    assert.deepEqual(mcp.errors, [
      "MCP server 'mute' did not finish the MCP handshake within 0.5 s",
    ]);
    assert.deepEqual(mcp.tools, []);
  } finally {
    await mcp.close();
  }
  assert.ok(await eventually(() => !sleepersAlive()), "the mute server was stopped");
});

function sleepersAlive(): boolean {
  const out = new Deno.Command("pgrep", { args: ["-x", "-f", "sleep 987654"] }).outputSync();
  const pids = new TextDecoder().decode(out.stdout).trim().split("\n").filter((l) => l !== "");
  return pids.some((pid) => processAlive(Number(pid)));
}
