/**
 * Issue 52: on the bare launch line `-p` is `--print`, so `deft -p PROVIDER …` (the spelling
 * `deft run` takes) is refused with the fix instead of sending "PROVIDER task" to the model.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

// deno-lint-ignore no-explicit-any
type Message = any;

Deno.test("launch: -p followed by a provider kind or a configured provider is refused, naming --provider; no model request is made", async () => {
  await using dir = await tempDir("deft-print-provider-");
  const mock = MockLLM.start([chatText("Done.")]);
  try {
    await Deno.mkdir(`${dir.path}/.config/deft`, { recursive: true });
    await Deno.writeTextFile(
      `${dir.path}/.config/deft/config.yaml`,
      [
        "model_providers:",
        `  localmock: { provider: openai_compatible, base_url: "${mock.url}/v1", api_key: k }`,
        "models:",
        "  main: { model_provider: localmock, model: mock-model }",
        "agents:",
        "  deft_agent: { model: main, max_steps: 3 }",
        "",
      ].join("\n"),
    );
    const env = {
      HOME: dir.path,
      XDG_CONFIG_HOME: `${dir.path}/.config`,
      XDG_STATE_HOME: `${dir.path}/state`,
    };
    const cwd = dir.path;
    const kind = await runDeft(["-p", "openai_compatible", "-m", "mock-model", "say hi"], {
      cwd,
      env,
    });
    assert.equal(kind.code, 2, kind.stderr);
    assert.match(
      kind.stderr,
      /-p here is --print \(as in Claude Code\), so 'openai_compatible' would be sent as a word of the task: write --provider openai_compatible/,
    );
    assert.equal(kind.stderr.match(/--print/g)?.length, 1, "said once");
    const named = await runDeft(["-p", "localmock", "say hi"], { cwd, env });
    assert.equal(named.code, 2, named.stderr);
    assert.match(named.stderr, /write --provider localmock/);
    // After the task too: `-p` takes no value, so the word after it is the task's.
    const after = await runDeft(["say hi", "-m", "mock-model", "-p", "localmock"], { cwd, env });
    assert.equal(after.code, 2, after.stderr);
    assert.match(after.stderr, /write --provider localmock/);
    assert.equal(mock.requests.length, 0, "no task reached the model");

    // A task that merely starts with such a word, quoted as one argument, is sent as written.
    const quoted = await runDeft(["-p", "openai is down: what now"], { cwd, env });
    assert.equal(quoted.code, 0, quoted.stderr);
    assert.equal(mock.requests.length, 1);
    const users = mock.requests[0].body.messages.filter((m: Message) => m.role === "user");
    assert.match(JSON.stringify(users.at(-1).content), /openai is down: what now/);
  } finally {
    await mock.close();
  }
});
