import assert from "node:assert/strict";
import { runDeft, trustedHome } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";

const SERVER = new URL("../../fixtures/mcp/stdio_server.ts", import.meta.url).pathname;

function config(extra = ""): string {
  return `
mcp_servers:
  fx:
    command: ${JSON.stringify(Deno.execPath())}
    args: ["run", "-A", ${JSON.stringify(SERVER)}]
  ghost:
    command: /no/such/mcp-server
allow_mcp_servers: [fx, ghost]
${extra}`;
}

Deno.test("deft tools lists the allowed MCP servers' tools, marked with their server", async () => {
  const home = await trustedHome();
  await Deno.writeTextFile(`${home}/deft.yaml`, config());
  const r = await runDeft(["tools"], { cwd: home, env: { HOME: home } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^mcp__fx__echo\s+.*\(MCP server fx\)$/m);
  assert.match(r.stdout, /^bash\s/m);
  assert.match(r.stderr, /MCP server 'ghost'/, "a server that cannot start is reported");
  const json = await runDeft(["tools", "--json", "--provider", "anthropic"], {
    cwd: home,
    env: { HOME: home },
  });
  const echo = JSON.parse(json.stdout).find((d: { name: string }) => d.name === "mcp__fx__echo");
  assert.equal(echo.parameters.properties.text.type, "string");
});

Deno.test("deft run: the agent calls an MCP tool; isError comes back as a failed result", async () => {
  const repo = await makeBuggyRepo();
  const home = await trustedHome();
  const mock = MockLLM.start([
    chatToolCalls([["mcp__fx__echo", { text: "hi", times: 2 }], ["mcp__fx__fail", {}]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    await Deno.writeTextFile(
      `${home}/deft.yaml`,
      config(`model_providers:
  m: { provider: openai_compatible, base_url: "${mock.url}/v1", api_key: k }
models:
  m: { model_provider: m, model: mock, max_retries: 0, parallel_tool_calls: true }
agents:
  deft_agent: { model: m, max_steps: 4 }
`),
    );
    const r = await runDeft(["run", "use the server", "-w", repo], {
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    const messages = mock.requests[1].body.messages;
    const results = messages.filter((m: { role: string }) => m.role === "tool");
    assert.equal(results[0].content, "hihi");
    assert.match(results[1].content, /^Error: the fixture failed on purpose/);
    assert.ok(
      mock.requests[0].body.tools.some((t: { function: { name: string } }) =>
        t.function.name === "mcp__fx__echo"
      ),
    );
    assert.match(r.stderr, /warning: MCP server 'ghost'/);
  } finally {
    await mock.close();
  }
});
