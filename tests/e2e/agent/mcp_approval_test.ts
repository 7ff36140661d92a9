/**
 * MCP tools under `--approval commands` (issue 38): an MCP server's tool can run any program, so
 * it is asked about, unless the server marks it `readOnlyHint` and the server is the user's own
 * (started by the user's config file). A repository's config file, even in a trusted folder, does
 * not get its servers' word believed. Driven through a terminal, as a user would answer.
 */
import assert from "node:assert/strict";
import { mockRunArgs } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { tempDir } from "../../helpers/temp.ts";

const SERVER = new URL("../../fixtures/mcp/stdio_server.ts", import.meta.url).pathname;

const SERVERS = `
mcp_servers:
  fx:
    command: ${JSON.stringify(Deno.execPath())}
    args: ["run", "-A", ${JSON.stringify(SERVER)}]
allow_mcp_servers: [fx]
`;

/** Runs one `deft run --approval commands` whose model calls `pid` (read-only) then `echo`. */
async function run(home: string, workspace: string, steps: { expect: string; send: string }[]) {
  const mock = MockLLM.start([
    chatToolCalls([["mcp__fx__pid", {}]]),
    chatToolCalls([["mcp__fx__echo", { text: "hi" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const r = await runDeftInPty(
      mockRunArgs(mock, "use the server", workspace, { extra: ["--approval", "commands"] }),
      steps,
      { cwd: home, env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` } },
    );
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    const results = mock.requests[2].body.messages
      .filter((m: { role: string }) => m.role === "tool")
      .map((m: { content: string }) => m.content);
    return { out, results };
  } finally {
    await mock.close();
  }
}

Deno.test("commands mode: the user's server's read-only tool runs unasked, its other tool is asked", async () => {
  await using home = await tempDir("deft-home-");
  await using workspace = await tempDir();
  await Deno.mkdir(`${home.path}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(`${home.path}/.config/deft/config.yaml`, SERVERS);
  const { out, results } = await run(home.path, workspace.path, [
    { expect: "Approve this tool call\\?[\\s\\S]*mcp__fx__echo[\\s\\S]*approve> ", send: "n\r" },
  ]);
  assert.match(results[0], /"pid":\d+/, "the read-only tool ran unasked");
  assert.match(results[1], /denied this tool call/);
  assert.equal(out.match(/Approve this/g)?.length, 1, out);
  assert.doesNotMatch(out, /Approve this tool call\?\s*mcp__fx__pid/);
});

Deno.test("commands mode: a repository's server is asked about even for a tool it marks read-only", async () => {
  await using home = await tempDir("deft-home-");
  await using workspace = await tempDir();
  await Deno.mkdir(`${home.path}/.config/deft`, { recursive: true });
  // The folder is trusted, so its deft.yaml may start servers; their word is still not the user's.
  await Deno.writeTextFile(
    `${home.path}/.config/deft/config.yaml`,
    `trusted_folders: [${JSON.stringify(home.path)}]\n`,
  );
  await Deno.writeTextFile(`${home.path}/deft.yaml`, SERVERS);
  const { out, results } = await run(home.path, workspace.path, [
    { expect: "Approve this tool call\\?[\\s\\S]*mcp__fx__pid[\\s\\S]*approve> ", send: "n\r" },
    { expect: "Approve this tool call\\?[\\s\\S]*mcp__fx__echo[\\s\\S]*approve> ", send: "y\r" },
  ]);
  assert.match(results[0], /denied this tool call/, "the repository's read-only tool was asked");
  assert.equal(results[1], "hi");
  assert.equal(out.match(/Approve this/g)?.length, 2, out);
});
