import assert from "node:assert/strict";
import { ConfigError, defaultConfig, parseConfig } from "../../src/config/load.ts";
import { resolveRunConfig } from "../../src/config/resolve.ts";
import { loadYaml } from "../../src/config/yaml.ts";

// The config parsers are called here on text, with no file read first (src/config/yaml.ts).
await loadYaml();

const TRAE_STYLE = `
agents:
  trae_agent:
    enable_lakeview: true
    model: trae_agent_model
    max_steps: 200
    tools:
      - bash
      - str_replace_based_edit_tool
      - sequentialthinking
      - task_done
model_providers:
  anthropic:
    api_key: file-key
    provider: anthropic
models:
  trae_agent_model:
    model_provider: anthropic
    model: claude-sonnet-4-20250514
    max_tokens: 4096
    temperature: 0.5
    top_p: 1
    top_k: 0
    max_retries: 10
    parallel_tool_calls: true
lakeview:
  model: trae_agent_model
mcp_servers:
  playwright:
    command: npx
    args: ["@playwright/mcp@0.0.27"]
allow_mcp_servers: []
`;

const noEnv = () => undefined;

Deno.test("a Trae Agent config loads as it is", () => {
  const { config, warnings } = parseConfig(TRAE_STYLE, "trae_config.yaml");
  assert.deepEqual(warnings, []);
  const run = resolveRunConfig({ config, warnings }, {}, noEnv);
  assert.equal(run.model.settings.model, "claude-sonnet-4-20250514");
  assert.equal(run.model.provider.api_key, "file-key");
  assert.equal(run.agent.tools.length, 4);
  assert.equal(run.lakeview?.settings.model, "claude-sonnet-4-20250514");
  assert.equal(run.mcpServers.playwright.command, "npx");
});

Deno.test("precedence: CLI flags > environment > file", () => {
  const loaded = parseConfig(TRAE_STYLE);
  const env = (n: string) =>
    ({ ANTHROPIC_API_KEY: "env-key", ANTHROPIC_BASE_URL: "http://env" })[n];
  const fromEnv = resolveRunConfig(loaded, {}, env);
  assert.equal(fromEnv.model.provider.api_key, "env-key");
  assert.equal(fromEnv.model.provider.base_url, "http://env");
  const fromCli = resolveRunConfig(
    loaded,
    { apiKey: "cli-key", modelBaseUrl: "http://cli", model: "other", maxSteps: 7 },
    env,
  );
  assert.equal(fromCli.model.provider.api_key, "cli-key");
  assert.equal(fromCli.model.provider.base_url, "http://cli");
  assert.equal(fromCli.model.settings.model, "other");
  assert.equal(fromCli.agent.max_steps, 7);
});

Deno.test("no file: defaults plus a provider from the command line", () => {
  const run = resolveRunConfig(
    { config: defaultConfig(), warnings: [] },
    { provider: "openai" },
    (n) => n === "OPENAI_API_KEY" ? "k" : undefined,
  );
  assert.equal(run.model.provider.provider, "openai");
  assert.equal(run.model.settings.model, "gpt-4.1");
  assert.equal(run.agent.max_steps, 200);
  assert.deepEqual(run.agent.tools, [
    "bash",
    "bash_output",
    "kill_shell",
    "str_replace_based_edit_tool",
    "json_edit_tool",
    "sequentialthinking",
    "task_done",
  ]);
});

Deno.test("a missing key names the variable to set", () => {
  assert.throws(
    () =>
      resolveRunConfig({ config: defaultConfig(), warnings: [] }, { provider: "openai" }, noEnv),
    /No API key for provider 'openai': set OPENAI_API_KEY/,
  );
  // Local servers need none.
  const local = resolveRunConfig(
    { config: defaultConfig(), warnings: [] },
    { provider: "openai_compatible", model: "qwen" },
    noEnv,
  );
  assert.equal(local.model.provider.api_key, undefined);
});

Deno.test("Trae's http_url is read as url; url wins when both are given", () => {
  const { config, warnings } = parseConfig(
    "mcp_servers:\n" +
      "  a:\n    http_url: http://a/mcp\n    trust: true\n" +
      "  b:\n    url: http://b/mcp\n    http_url: http://other/mcp\n",
  );
  assert.deepEqual(warnings, []);
  assert.deepEqual(config.mcp_servers.a, { url: "http://a/mcp", trust: true });
  assert.deepEqual(config.mcp_servers.b, { url: "http://b/mcp" });
});

Deno.test("unknown keys are warnings with line and column, not errors", () => {
  const { warnings } = parseConfig(
    "modles: {}\nmodel_providers:\n  a:\n    provider: openai\n    api_kee: x\n",
    "c.yaml",
  );
  assert.deepEqual(
    warnings,
    [
      "c.yaml: unknown key 'model_providers.a.api_kee' (line 5, column 5) is ignored",
      "c.yaml: unknown key 'modles' (line 1, column 1) is ignored",
    ].sort().filter((w) => warnings.includes(w)),
  );
  assert.equal(warnings.length, 2);
});

Deno.test("type errors, bad enums, dangling references and bad YAML name the key and position", () => {
  const cases: [string, RegExp][] = [
    [
      "models:\n  m:\n    model_provider: p\n    model: x\n    temperature: hot\n",
      /'models\.m\.temperature' \(line 5, column 5\): expected number/,
    ],
    [
      "model_providers:\n  p:\n    provider: skynet\n",
      /'model_providers\.p\.provider' \(line 3, column 5\): must be one of "openai"/,
    ],
    [
      "models:\n  m:\n    model_provider: ghost\n    model: x\n",
      /'models\.m\.model_provider' \(line 3, column 5\): model provider 'ghost' is not defined/,
    ],
    ["agents:\n  deft_agent:\n    max_steps: 3\n", /'agents\.deft_agent\.model'.*is required/],
    [
      "allow_mcp_servers: [nope]\n",
      /'allow_mcp_servers\[0\]' \(line 1, column 21\): MCP server 'nope' is not defined/,
    ],
    ["mcp_servers:\n  s:\n    timeout: 3\n", /give either 'command' \(stdio\) or 'url'/],
    [
      "sandbox: strict\n",
      /'sandbox' \(line 1, column 1\): must be one of "none", "workspace-write"/,
    ],
    ["models: [\n", /invalid YAML at line 2, column 1/],
    ["a: 1\na: 2\n", /invalid YAML at line 2/],
  ];
  for (const [text, expected] of cases) {
    assert.throws(() => parseConfig(text, "c.yaml"), (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      assert.match(e.message, expected);
      return true;
    });
  }
});

Deno.test("an MCP server's sandbox: none or read-only; anything else is an error at its line", () => {
  const { config } = parseConfig(
    "mcp_servers:\n  a: {command: x, sandbox: none}\n  b: {command: y, sandbox: read-only}\n",
    "deft.yaml",
  );
  assert.equal(config.mcp_servers.a.sandbox, "none");
  assert.equal(config.mcp_servers.b.sandbox, "read-only");
  assert.throws(
    () =>
      parseConfig(
        "mcp_servers:\n  a:\n    command: x\n    sandbox: workspace-write\n",
        "deft.yaml",
      ),
    (e) => e instanceof ConfigError && /mcp_servers\.a\.sandbox.*line 4/.test(e.message),
  );
});
