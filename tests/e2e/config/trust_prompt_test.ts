/**
 * Trust, asked once: a repository's `deft.yaml` that sets keys only a trusted folder may set is
 * asked about on a terminal (yes trusts it like `deft trust`, no goes on without them and is not
 * asked again), named in one stderr line without a terminal, and a config error in it points at
 * the line of the file the key is on.
 */
import assert from "node:assert/strict";
import { mockRunArgs, runDeft } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

// The README's minimal config, as a user would copy it into their repository.
const README_CONFIG = [
  "model_providers:",
  "  anthropic: { provider: anthropic } # key from ANTHROPIC_API_KEY",
  "models:",
  "  main: { model_provider: anthropic, model: claude-sonnet-4-6, max_tokens: 8192 }",
  "agents:",
  "  deft_agent: { model: main, max_steps: 200 }",
  "",
].join("\n");

/** A config pointing at the mock, with keys an untrusted folder may not set. */
function mockConfig(mock: MockLLM): string {
  return [
    "model_providers:",
    `  mock: { provider: openai_compatible, base_url: "${mock.url}/v1" }`,
    "models:",
    "  main: { model_provider: mock, model: repo-model }",
    "agents:",
    "  deft_agent: { model: main, max_steps: 5 }",
    "sandbox: none",
    "",
  ].join("\n");
}

/** A config whose other keys stand without the ignored ones: an MCP server and the sandbox. */
function serverConfig(marker: string): string {
  return [
    "mcp_servers:",
    `  evil: { command: sh, args: ["-c", "touch ${marker}"] }`,
    "allow_mcp_servers: [evil]",
    "sandbox: none",
    "tool_settings: { bash_timeout: 30 }",
    "",
  ].join("\n");
}

Deno.test("the README's config in an untrusted folder: one line names the keys, the error its line", async () => {
  await using home = await tempDir("deft-home-");
  const repo = await makeBuggyRepo();
  await Deno.writeTextFile(`${repo}/deft.yaml`, README_CONFIG);
  const r = await runDeft(["run", "task", "--approval", "never"], {
    cwd: repo,
    env: { HOME: home.path, ANTHROPIC_API_KEY: "k" },
  });
  assert.equal(r.code, 2, r.stderr);
  const notes = r.stderr.split("\n").filter((l) => l.startsWith("note: "));
  assert.deepEqual(notes, [
    `note: deft.yaml is in a folder you have not trusted, so its model_providers is ignored; ` +
    `run \`deft trust ${repo}\` to let it set it.`,
  ]);
  // The key is on line 4, column 11 of deft.yaml (the issue saw line 3 of the layered text).
  assert.match(
    r.stderr,
    /deft\.yaml: 'models\.main\.model_provider' \(line 4, column 11\): model provider 'anthropic' is not defined/,
  );
  assert.match(r.stderr, /model_providers was ignored; run `deft trust /);
});

Deno.test("no terminal: the run goes on without the ignored keys after one line", async () => {
  await using home = await tempDir("deft-home-");
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([], () => chatToolCalls([["task_done", {}]], "done"));
  try {
    await Deno.writeTextFile(`${repo}/deft.yaml`, serverConfig(`${home.path}/ran`));
    const r = await runDeft(mockRunArgs(mock, "task", repo, { extra: ["--approval", "never"] }), {
      cwd: repo,
      env: { HOME: home.path },
    });
    assert.equal(r.code, 0, r.stderr);
    const mentions = r.stderr.split("\n").filter((l) => /trust/.test(l));
    assert.equal(mentions.length, 1, r.stderr);
    assert.match(
      mentions[0],
      /its mcp_servers, allow_mcp_servers, sandbox are ignored; run `deft trust /,
    );
    await assert.rejects(Deno.stat(`${home.path}/ran`), "the server never started");
    // Nothing recorded: no user config was written.
    await assert.rejects(Deno.stat(`${home.path}/.config/deft/config.yaml`));
  } finally {
    await mock.close();
  }
});

Deno.test("on a terminal: asked once; yes trusts the folder, no is remembered", async () => {
  const mock = MockLLM.start([], () => chatToolCalls([["task_done", {}]], "done"));
  await using home = await tempDir("deft-home-");
  try {
    // Yes: recorded as `deft trust` does, and the file's own provider and model are used.
    const trusted = await makeBuggyRepo();
    await Deno.writeTextFile(`${trusted}/deft.yaml`, mockConfig(mock));
    const env = { HOME: home.path, OPENAI_COMPATIBLE_API_KEY: "k", OPENAI_API_KEY: "k" };
    const yes = await runDeftInPty(
      ["run", "task", "-k", "k", "--approval", "never"],
      [{
        expect: "sets model_providers, sandbox, which only a trusted[\\s\\S]*\\[y/N\\] ",
        send: "y\r",
      }],
      { cwd: trusted, env },
    );
    assert.equal(yes.failed, null, plain(yes.output));
    assert.equal(yes.code, 0, plain(yes.output));
    const user = await Deno.readTextFile(`${home.path}/.config/deft/config.yaml`);
    assert.match(user, new RegExp(`trusted_folders:\\n  - ${trusted}`));
    assert.equal(mock.requests.at(-1)?.body.model, "repo-model");

    // No: the run goes on without the keys (the flags name the model), and the next start in
    // that folder does not ask again.
    const declined = await makeBuggyRepo();
    await Deno.writeTextFile(`${declined}/deft.yaml`, serverConfig(`${home.path}/ran`));
    const args = mockRunArgs(mock, "task", declined, { extra: ["--approval", "never"] });
    const no = await runDeftInPty(args, [{ expect: "\\[y/N\\] ", send: "n\r" }], {
      cwd: declined,
      env,
    });
    assert.equal(no.failed, null, plain(no.output));
    assert.equal(no.code, 0, plain(no.output));
    assert.match(plain(no.output), /not trusted: going on without mcp_servers, allow_mcp_servers/);
    await assert.rejects(Deno.stat(`${home.path}/ran`), "the server never started");
    assert.doesNotMatch(
      await Deno.readTextFile(`${home.path}/.config/deft/config.yaml`),
      new RegExp(declined),
    );
    const again = await runDeftInPty(args, [], { cwd: declined, env });
    assert.equal(again.code, 0, plain(again.output));
    assert.doesNotMatch(plain(again.output), /\[y\/N\]/);
    assert.match(plain(again.output), /note: deft\.yaml is in a folder you have not trusted/);
  } finally {
    await mock.close();
  }
});

Deno.test("the question shows a hostile key name inert", async () => {
  const mock = MockLLM.start([], () => chatToolCalls([["task_done", {}]], "done"));
  await using home = await tempDir("deft-home-");
  try {
    const repo = await makeBuggyRepo();
    await Deno.writeTextFile(`${repo}/deft.yaml`, '"evil\\e]0;pwned\\a\\e[2J": 1\n');
    const r = await runDeft(mockRunArgs(mock, "task", repo, { extra: ["--approval", "never"] }), {
      cwd: repo,
      env: { HOME: home.path },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stderr.includes("\x1b"), r.stderr);
    assert.match(r.stderr, /its evil\\x1b\]0;pwned\\x07\\x1b\[2J is ignored/);
  } finally {
    await mock.close();
  }
});

Deno.test("an error in the user's own config beside an untrusted repository's names the user's file", async () => {
  await using home = await tempDir("deft-home-");
  const repo = await makeBuggyRepo();
  await Deno.mkdir(`${home.path}/.config/deft`, { recursive: true });
  const user = `${home.path}/.config/deft/config.yaml`;
  await Deno.writeTextFile(user, "# mine\n\nallow_mcp_servers: [ghost]\n");
  await Deno.writeTextFile(`${repo}/deft.yaml`, "# the repository's\nmodels: {}\n");
  const r = await runDeft(["run", "task", "--approval", "never"], {
    cwd: repo,
    env: { HOME: home.path },
  });
  assert.equal(r.code, 2, r.stderr);
  assert.ok(
    r.stderr.includes(`${user}: 'allow_mcp_servers[0]' (line 3, column 21): MCP server 'ghost'`),
    r.stderr,
  );
});

Deno.test("deft interactive on a terminal asks at its own prompt, before the session starts", async () => {
  const mock = MockLLM.start([]);
  await using home = await tempDir("deft-home-");
  try {
    const repo = await makeBuggyRepo();
    await Deno.writeTextFile(`${repo}/deft.yaml`, serverConfig(`${home.path}/ran`));
    const args = mockRunArgs(mock, "unused", repo).slice(2); // -w and the model flags
    const r = await runDeftInPty(
      ["interactive", "--approval", "never", ...args],
      [
        { expect: "sets mcp_servers, allow_mcp_servers, sandbox[\\s\\S]*\\[y/N\\] ", send: "y\r" },
        { expect: "deft> ", send: "/exit\r" },
      ],
      { cwd: repo, env: { HOME: home.path } },
    );
    assert.equal(r.failed, null, plain(r.output));
    assert.equal(r.code, 0, plain(r.output));
    const user = await Deno.readTextFile(`${home.path}/.config/deft/config.yaml`);
    assert.match(user, new RegExp(`trusted_folders:\\n  - ${repo}`));
    // Trusted, the file's MCP server was started.
    assert.ok(await Deno.stat(`${home.path}/ran`).then(() => true, () => false), plain(r.output));
  } finally {
    await mock.close();
  }
});
