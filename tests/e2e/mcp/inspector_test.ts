/**
 * `deft mcp` driven by the MCP Inspector's CLI, a client nobody here wrote. The Inspector is not
 * in the import map (deno.lock is frozen), so it runs through `npx`, which installs it from the
 * npm registry on first use (about 20 s; later runs take about 2 s). It needs Node 22 while a
 * fresh Debian 12 has Node 18: npx fetches Node 22 from the npm registry too (the `node` package)
 * and puts it first on the Inspector's PATH, so the test runs the same wherever npx does.
 */
import assert from "node:assert/strict";
import { servedToolNames } from "../../../src/tools/registry.ts";
import { deftMcpCommand } from "../../helpers/deft_mcp.ts";
import { tempDir } from "../../helpers/temp.ts";

const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";
/** The Node the Inspector asks for (its engines field: >= 22.19). */
const NODE = "node@22";

function npxAvailable(): boolean {
  try {
    return new Deno.Command("npx", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const HAVE_NPX = npxAvailable();
if (!HAVE_NPX) {
  console.warn("inspector_test: `npx` is not on PATH; the Inspector tests are skipped.");
}

interface InspectorRun {
  code: number;
  json: Record<string, unknown>;
  stderr: string;
}

async function inspector(workspace: string, home: string, args: string[]): Promise<InspectorRun> {
  const { command, args: deftArgs } = deftMcpCommand(["-w", workspace]);
  const out = await new Deno.Command("npx", {
    args: [
      "-y",
      "-p",
      NODE,
      "-p",
      INSPECTOR,
      "--",
      "mcp-inspector",
      "--cli",
      "--format",
      "json",
      ...args,
      "--",
      command,
      ...deftArgs,
    ],
    // Keep the Inspector's catalog and settings out of the real home directory.
    env: {
      MCP_CATALOG_PATH: `${home}/catalog.json`,
      MCP_CLIENT_CONFIG_PATH: `${home}/client.json`,
      NO_COLOR: "1",
    },
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(stdout);
  } catch {
    throw new Error(
      `the Inspector printed no JSON (exit ${out.code}).\nstdout:\n${stdout}\nstderr:\n${stderr}`,
    );
  }
  return { code: out.code, json, stderr };
}

Deno.test({
  name: "the MCP Inspector CLI lists and calls deft mcp's tools",
  ignore: !HAVE_NPX,
  fn: async (t) => {
    await using workspaceDir = await tempDir();
    const workspace = workspaceDir.path;
    await using homeDir = await tempDir();
    const home = homeDir.path;
    await t.step("tools/list names every tool, and --strict finds no schema errors", async () => {
      const run = await inspector(workspace, home, ["--strict", "--method", "tools/list"]);
      assert.equal(run.code, 0, run.stderr);
      const tools =
        (run.json.result as { tools: { name: string; inputSchema: { type: string } }[] })
          .tools;
      assert.deepEqual(tools.map((tool) => tool.name), servedToolNames());
      for (const tool of tools) assert.equal(tool.inputSchema.type, "object");
    });

    await t.step("tools/call task_done", async () => {
      const run = await inspector(workspace, home, [
        "--method",
        "tools/call",
        "--tool-name",
        "task_done",
      ]);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(run.json.result, { content: [{ type: "text", text: "Task done." }] });
    });

    await t.step("tools/call sequentialthinking with JSON arguments", async () => {
      const run = await inspector(workspace, home, [
        "--method",
        "tools/call",
        "--tool-name",
        "sequentialthinking",
        "--tool-args-json",
        JSON.stringify({
          thought: "Check the inspector.",
          thought_number: 1,
          total_thoughts: 1,
          next_thought_needed: false,
        }),
      ]);
      assert.equal(run.code, 0, run.stderr);
      const result = run.json.result as { content: { text: string }[]; isError?: boolean };
      assert.equal(result.isError, undefined);
      assert.match(result.content[0].text, /"thought_number": 1/);
    });

    await t.step("a refused path comes back as an isError result", async () => {
      const run = await inspector(workspace, home, [
        "--method",
        "tools/call",
        "--tool-name",
        "str_replace_based_edit_tool",
        "--tool-args-json",
        JSON.stringify({ command: "view", path: "/etc/passwd" }),
      ]);
      assert.notEqual(run.code, 0);
      const result = run.json.result as { content: { text: string }[]; isError?: boolean };
      assert.equal(result.isError, true);
    });
  },
});
