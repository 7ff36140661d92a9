import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { createTools, servedToolNames } from "../../../src/tools/registry.ts";
import { runDeft } from "../../helpers/deft.ts";
import { deftMcpCommand, RawSession } from "../../helpers/deft_mcp.ts";
import { eventually, pidsByCmdline } from "../../helpers/bash.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A sleep duration no other process has, to find the process by its command line. */
function uniqueSleep(): string {
  return `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content;
  assert.equal(content.length, 1);
  assert.equal(content[0].type, "text");
  return (content[0] as { text: string }).text;
}

async function connect(workspace: string): Promise<Client> {
  const client = new Client({ name: "deft-test", version: "1.0.0" });
  const transport = new StdioClientTransport({
    ...deftMcpCommand(["-w", workspace]),
    env: { ...Deno.env.toObject(), NO_COLOR: "1" },
    stderr: "pipe",
  });
  await client.connect(transport);
  return client;
}

Deno.test({
  name: "an MCP client uses deft mcp: list, edit, bash with shared state, refused paths",
  // The SDK's stdio transport drives the child through Node's child_process.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    await using workspaceTemp = await tempDir();
    const workspace = workspaceTemp.path;
    await using outsideTemp = await tempDir();
    const outside = outsideTemp.path;
    const client = await connect(workspace);
    try {
      assert.equal(client.getServerVersion()?.name, "deft");
      assert.match(client.getInstructions() ?? "", new RegExp(`workspace ${workspace}\\.`));

      await t.step("tools/list gives every served tool as deft renders it", async () => {
        const { tools } = await client.listTools();
        const expected = createTools(
          { provider: "anthropic", workspace, settings: {} },
          servedToolNames(),
        ).map((tool) => tool.jsonDefinition("anthropic"));
        assert.deepEqual(
          tools.map((t) => ({ name: t.name, description: t.description, schema: t.inputSchema })),
          expected.map((d) => ({ name: d.name, description: d.description, schema: d.parameters })),
        );
      });

      await t.step("sequentialthinking and task_done answer", async () => {
        const thought = await client.callTool({
          name: "sequentialthinking",
          arguments: {
            thought: "Plan the edit.",
            thought_number: 1,
            total_thoughts: 2,
            next_thought_needed: true,
          },
        });
        assert.equal(thought.isError, undefined, text(thought));
        const done = await client.callTool({ name: "task_done", arguments: {} });
        assert.deepEqual([done.isError, text(done)], [undefined, "Task done."]);
      });

      const file = `${workspace}/hello.py`;
      const created = await client.callTool({
        name: "str_replace_based_edit_tool",
        arguments: { command: "create", path: file, file_text: "print('hello')\n" },
      });
      await t.step({
        name: "the editor creates a file, then edits it",
        fn: async () => {
          assert.equal(created.isError, undefined, text(created));
          assert.match(text(created), /File created successfully at/);
          const edited = await client.callTool({
            name: "str_replace_based_edit_tool",
            arguments: { command: "str_replace", path: file, old_str: "hello", new_str: "world" },
          });
          assert.equal(edited.isError, undefined, text(edited));
          assert.match(text(edited), /has been edited/);
          assert.equal(await Deno.readTextFile(file), "print('world')\n");
        },
      });

      const first = await client.callTool({
        name: "bash",
        arguments: { command: "cd sub 2>/dev/null || mkdir sub && cd sub; export GREETING=hi" },
      });
      await t.step({
        name: "two bash calls share one shell",
        fn: async () => {
          assert.equal(first.isError, undefined, text(first));
          const second = await client.callTool({
            name: "bash",
            arguments: { command: 'echo "$GREETING from $(pwd)"' },
          });
          assert.equal(second.isError, undefined, text(second));
          assert.match(text(second), new RegExp(`hi from ${workspace}/sub`));
        },
      });

      await t.step("a path outside the workspace is an isError result", async () => {
        const refused = await client.callTool({
          name: "str_replace_based_edit_tool",
          arguments: { command: "create", path: `${outside}/evil.txt`, file_text: "x" },
        });
        assert.equal(refused.isError, true);
        assert.match(text(refused), /outside|leaves the workspace/i);
        assert.equal(await Deno.stat(`${outside}/evil.txt`).then(() => true, () => false), false);
      });

      await t.step("invalid arguments are an isError result the model can read", async () => {
        const bad = await client.callTool({
          name: "str_replace_based_edit_tool",
          arguments: { command: "view" },
        });
        assert.equal(bad.isError, true);
        assert.match(text(bad), /missing required argument `path`/);
      });

      await t.step("an unknown tool is a protocol error (invalid params)", async () => {
        await assert.rejects(
          client.callTool({ name: "no_such_tool", arguments: {} }),
          (e: unknown) => {
            assert.ok(e instanceof McpError);
            assert.equal(e.code, ErrorCode.InvalidParams);
            assert.match(e.message, /Tool 'no_such_tool' not found\. Available tools: \[bash, /);
            return true;
          },
        );
      });
    } finally {
      await client.close();
    }
  },
});

Deno.test("closing the connection closes the tools, leaves no process behind, exits 0", async (t) => {
  const sleeper = uniqueSleep();
  const workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const session = new RawSession(["-w", workspace]);
  try {
    await session.initialize();
    const started = await session.call(1, "bash", { command: `sleep ${sleeper} & echo $!` });
    const result = started.result as CallToolResult;
    // Seen running first, by command line (the host's view), so that "gone" below means killed.
    assert.ok(
      await eventually(async () => (await pidsByCmdline(sleeper)).length > 0),
      `sleep ${sleeper} never started: ${text(result)}`,
    );
    const status = await session.end();
    assert.equal(status.code, 0, session.stderr);
    for (const line of session.stdout) assert.equal(JSON.parse(line).jsonrpc, "2.0");
    await t.step({
      name: "a background job started through bash is gone",
      fn: async () => {
        assert.equal(result.isError, undefined, text(result));
        // By command line: `$!` is a pid inside the shell's PID namespace, not the host's.
        assert.ok(
          await eventually(async () => (await pidsByCmdline(sleeper)).length === 0),
          `sleep ${sleeper} outlived deft mcp`,
        );
      },
    });
  } finally {
    await workspaceTemp.remove();
  }
});

Deno.test("a client that vanishes without closing stdin ends the session cleanly", async (t) => {
  const sleeper = uniqueSleep();
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const session = new RawSession(["-w", workspace]);
  try {
    await session.initialize();
    const started = await session.call(1, "bash", { command: `sleep ${sleeper} & echo $!` });
    const result = started.result as CallToolResult;
    // Seen running first, by command line (the host's view), so that "gone" below means killed.
    assert.ok(
      await eventually(async () => (await pidsByCmdline(sleeper)).length > 0),
      `sleep ${sleeper} never started: ${text(result)}`,
    );
    await session.abandon();
    // The next answer has nowhere to go, and the failed write ends the session. (A read still
    // pending in this process may swallow the first answer, so keep asking until it exits.)
    let exited = false;
    const status = session.child.status.finally(() => exited = true);
    for (let id = 2; !exited && id < 200; id++) {
      const call = { id, method: "tools/call", params: { name: "task_done", arguments: {} } };
      await session.send(call).catch(() => {});
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(exited, "deft mcp did not notice that its client was gone");
    assert.equal((await status).code, 0, session.stderr);
    assert.doesNotMatch(session.stderr, /Uncaught|EPIPE|Broken pipe/i);
    await t.step({
      name: "a background job started through bash is gone",
      fn: async () => {
        assert.equal(result.isError, undefined, text(result));
        // By command line: `$!` is a pid inside the shell's PID namespace, not the host's.
        assert.ok(
          await eventually(async () => (await pidsByCmdline(sleeper)).length === 0),
          `sleep ${sleeper} outlived deft mcp`,
        );
      },
    });
  } finally {
    await session.closeStdin();
  }
});

Deno.test("calls sent before stdin ends are still answered", async () => {
  const workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const session = new RawSession(["-w", workspace]);
  try {
    await session.initialize();
    await session.send({
      id: 1,
      method: "tools/call",
      params: {
        name: "sequentialthinking",
        arguments: {
          thought: "t",
          thought_number: 1,
          total_thoughts: 1,
          next_thought_needed: false,
        },
      },
    });
    await session.send({
      id: 2,
      method: "tools/call",
      params: { name: "task_done", arguments: {} },
    });
    const status = await session.end();
    assert.equal(status.code, 0, session.stderr);
    const ids = session.stdout.map((line) => JSON.parse(line).id).slice(1).sort();
    assert.deepEqual(ids, [1, 2], `${session.stdout.join("\n")}\n${session.stderr}`);
  } finally {
    await workspaceTemp.remove();
  }
});

Deno.test("SIGTERM closes the tools and exits with 143", async (t) => {
  const sleeper = uniqueSleep();
  const workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const session = new RawSession(["-w", workspace]);
  try {
    await session.initialize();
    const started = await session.call(1, "bash", { command: `sleep ${sleeper} & echo $!` });
    const result = started.result as CallToolResult;
    // Seen running first, by command line (the host's view), so that "gone" below means killed.
    assert.ok(
      await eventually(async () => (await pidsByCmdline(sleeper)).length > 0),
      `sleep ${sleeper} never started: ${text(result)}`,
    );
    session.child.kill("SIGTERM");
    const status = await session.child.status;
    assert.equal(status.code, 143, session.stderr);
    await t.step({
      name: "a background job started through bash is gone",
      fn: async () => {
        assert.equal(result.isError, undefined, text(result));
        // By command line: `$!` is a pid inside the shell's PID namespace, not the host's.
        assert.ok(
          await eventually(async () => (await pidsByCmdline(sleeper)).length === 0),
          `sleep ${sleeper} outlived deft mcp`,
        );
      },
    });
  } finally {
    await workspaceTemp.remove();
  }
});

Deno.test("deft mcp refuses a missing workspace with exit 2", async () => {
  const { command, args } = deftMcpCommand(["-w", "/no/such/workspace"]);
  const out = await new Deno.Command(command, { args, stdin: "null" }).output();
  assert.equal(out.code, 2);
  assert.equal(new TextDecoder().decode(out.stdout), "");
  assert.match(new TextDecoder().decode(out.stderr), /\/no\/such\/workspace does not exist/);
});

Deno.test("deft mcp applies --sandbox exactly as deft tool does", async () => {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const outsideTemp = await tempDir();
  const outside = outsideTemp.path;
  const args = { command: `touch ${outside}/probe && echo wrote` };
  try {
    const direct = await runDeft([
      "tool",
      "bash",
      JSON.stringify(args),
      "-w",
      workspace,
      "--sandbox",
      "workspace-write",
    ]);
    const viaCli = JSON.parse(direct.stdout);
    const wroteDirect = await exists(`${outside}/probe`);
    await Deno.remove(`${outside}/probe`).catch(() => {});

    const session = new RawSession(["-w", workspace, "--sandbox", "workspace-write"]);
    await session.initialize();
    const answer = (await session.call(1, "bash", args)).result as CallToolResult;
    assert.equal((await session.end()).code, 0, session.stderr);

    assert.equal(answer.isError === true, !viaCli.success, text(answer));
    assert.equal(await exists(`${outside}/probe`), wroteDirect);
    if (!viaCli.success) {
      assert.ok(text(answer).includes(viaCli.error), `${text(answer)}\n${direct.stdout}`);
    }
  } finally {
    await outsideTemp.remove();
  }
});

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}
