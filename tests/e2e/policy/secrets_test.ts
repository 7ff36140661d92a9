/**
 * Secrets stay out of the model's reach: the shell's environment has no secret-looking variable,
 * trajectories mask every secret (also reversed) and well-known token shapes, and `deft config`
 * shows at most the last 4 characters.
 */
import assert from "node:assert/strict";
import { runDeft, runMocked, trustedHome } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { SecretMasker, secretValues } from "../../../src/policy/secrets.ts";
import { shellEnvironment } from "../../../src/policy/shell_env.ts";

const SECRETS: Record<string, string> = {
  ANTHROPIC_API_KEY: "sk-ant-api03-provider-key-0123456789",
  GITHUB_TOKEN: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  DB_PASSWORD: "correct-horse-battery-staple",
  my_service_credential: "cred-value-42-abcdef",
};

for (const sandbox of ["none", "workspace-write"]) {
  Deno.test(`shell env: \`env\` in the bash tool shows no secret (sandbox ${sandbox})`, async () => {
    const home = await trustedHome();
    try {
      const r = await runDeft(
        ["tool", "bash", JSON.stringify({ command: "env; echo END" }), "--sandbox", sandbox],
        { cwd: home, env: { HOME: home, ...SECRETS, DEFT_VISIBLE_SETTING: "kept" } },
      );
      assert.equal(r.code, 0, r.stderr);
      const output: string = JSON.parse(r.stdout).output;
      assert.match(output, /END/);
      assert.match(output, /^DEFT_VISIBLE_SETTING=kept$/m, "ordinary variables are inherited");
      assert.match(output, /^PATH=/m);
      for (const [name, value] of Object.entries(SECRETS)) {
        assert.ok(!output.includes(name), `${name} is not in the shell's environment`);
        assert.ok(!output.includes(value), `the value of ${name} is not in it either`);
      }
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });
}

Deno.test("shell env: the shell_environment policy (core, none, exclude, include_only, set)", () => {
  const env = { PATH: "/bin", HOME: "/h", EDITOR_THEME: "dark", GH_TOKEN: "t0k3n-t0k3n", X: "1" };
  assert.deepEqual(shellEnvironment({}, env), {
    PATH: "/bin",
    HOME: "/h",
    EDITOR_THEME: "dark",
    X: "1",
  });
  assert.deepEqual(shellEnvironment({ inherit: "core" }, env), { PATH: "/bin", HOME: "/h" });
  assert.deepEqual(shellEnvironment({ inherit: "none", set: { A: "b" } }, env), { A: "b" });
  assert.deepEqual(shellEnvironment({ exclude: ["editor_*"] }, env), {
    PATH: "/bin",
    HOME: "/h",
    X: "1",
  });
  assert.deepEqual(shellEnvironment({ include_only: ["PATH", "?"] }, env), {
    PATH: "/bin",
    X: "1",
  });
  assert.equal(shellEnvironment({ ignore_default_excludes: true }, env).GH_TOKEN, "t0k3n-t0k3n");
  assert.deepEqual(shellEnvironment({}, { PATH: "/bin", NOTE: "k-e-y" }, ["k-e-y"]), {
    PATH: "/bin",
  });
});

Deno.test("secrets: masked forwards, reversed and by shape", () => {
  const masker = new SecretMasker(secretValues({ SOME_TOKEN: "abcdefgh1234", SHORT_KEY: "ab" }));
  assert.equal(masker.mask("x abcdefgh1234 y 4321hgfedcba z"), "x *** y *** z");
  assert.equal(masker.mask("ab"), "ab", "short values are not masked");
  const shapes = [
    "sk-proj-ABCDEFGHIJKLMNOPQRSTUV",
    "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij",
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-1234567890-abcdefghij",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
  ];
  for (const shape of shapes) assert.equal(masker.mask(`<${shape}>`), "<***>", shape);
});

Deno.test("trajectory: a printed token and the reversed provider key are masked", async () => {
  const home = await trustedHome();
  const key = "sk-test-provider-key-0123456789";
  const password = "hunter2-but-longer-000";
  await Deno.writeTextFile(`${home}/key.txt`, key);
  await Deno.writeTextFile(`${home}/pw.txt`, password);
  // The command builds the token and reverses the key itself, so they appear only in outputs.
  const command = "printf 'ghp_%s\\n' $(printf 'Z%.0s' {1..36}); rev < key.txt; echo; cat pw.txt";
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const traj = `${home}/t.json`;
    const r = await runMocked(mock, "print things", home, {
      model: "mock",
      apiKey: key,
      extra: ["-t", traj],
      cwd: home,
      env: { HOME: home, SERVICE_PASSWORD: password, DEFT_RETRY_BASE_MS: "5" },
    });
    assert.equal(r.code, 0, r.stderr);
    // The model did see the output (masking is for the record, not the conversation).
    const seen = JSON.stringify(mock.requests[1].body.messages);
    assert.ok(seen.includes("ghp_ZZZZ"), "the command really printed the token");
    const text = await Deno.readTextFile(traj);
    JSON.parse(text);
    assert.ok(!text.includes("ghp_ZZZZ"), "token shape masked");
    assert.ok(!text.includes([...key].reverse().join("")), "reversed key masked");
    assert.ok(!text.includes(key), "key masked");
    assert.ok(!text.includes(password), "a secret variable's value is masked");
    assert.match(text, /\*\*\*/);
  } finally {
    await mock.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("deft config: at most the last 4 characters of a secret; secret headers masked", async () => {
  const home = await trustedHome();
  try {
    await Deno.writeTextFile(
      `${home}/deft.yaml`,
      [
        "model_providers:",
        "  a: { provider: anthropic, api_key: sk-ant-config-key-0000 }",
        "mcp_servers:",
        "  web:",
        "    url: http://127.0.0.1:9/mcp",
        "    headers: { Authorization: Bearer abcdef0123456789, Cookie: sid=s3cr3tcookie99, Accept: json }",
        "shell_environment: { set: { MY_API_KEY: value-of-the-key-1234, MODE: fast } }",
        "",
      ].join("\n"),
    );
    const r = await runDeft(["config", "-k", "sk-ant-flag-key-ABCDWXYZ"], {
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /api_key: "?\*\*\*\*WXYZ"?/);
    assert.doesNotMatch(r.stdout, /sk-ant|abcdef0123|s3cr3tcookie|value-of-the-key/);
    assert.match(r.stdout, /Accept: json/);
    assert.match(r.stdout, /MODE: fast/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
