/**
 * Finding 7 (issue 28) and the key-as-object-key defect (issue 29, item 7), from the attacker's
 * side: the user's key lives only in a config file (`api_key:`), the repository holds a copy of
 * it, and the model prints it (`cat`), streams it in its own text (split across deltas) and uses
 * it as an object key in a tool's arguments. No output may show it: stream-json events, the
 * plain console, the trajectory.
 */
import assert from "node:assert/strict";
import { mockRunArgs, runMocked, trustedHome } from "../../../helpers/deft.ts";
import { runDeftInPty } from "../../../helpers/pty.ts";
import { chatStream, chatToolCalls, MockLLM } from "../../../helpers/mock_llm.ts";

// Shaped like no well-known token, so only the config-file key list can hide it.
const KEY = "cfgkey-Qm81xZ0pLw93rTbV7";

async function setup(stream: boolean) {
  // The plain console does not stream, so the model answers whole there.
  const as = stream ? chatStream : <T>(reply: T) => reply;
  const home = await trustedHome();
  await Deno.writeTextFile(
    `${home}/deft.yaml`,
    `model_providers:\n  openai_compatible:\n    provider: openai_compatible\n    api_key: ${KEY}\n`,
  );
  const repo = `${home}/repo`;
  await Deno.mkdir(repo);
  await Deno.writeTextFile(`${repo}/notes.txt`, `deploy key: ${KEY}\n`);
  const mock = MockLLM.start([
    as(chatToolCalls([["bash", { command: "cat notes.txt" }]], "Reading the notes.")),
    as(chatToolCalls(
      [["json_edit_tool", {
        operation: "set",
        file_path: "x.json",
        json_path: "$.a",
        value: { [KEY]: 1 },
      }]],
      `The key is ${KEY} and reversed ${[...KEY].reverse().join("")}.`,
    )),
    as(chatToolCalls([["task_done", {}]], `Done; the key was ${KEY}.`)),
  ]);
  return { home, repo, mock };
}

for (const format of ["stream-json", "text"]) {
  Deno.test(`a config-file key printed by the model never reaches ${format} output`, async () => {
    const { home, repo, mock } = await setup(format === "stream-json");
    try {
      const r = await runMocked(mock, "look", repo, {
        apiKey: null,
        extra: ["-t", `${home}/t.json`, "--sandbox", "none", "--output-format", format],
        cwd: home,
        env: { HOME: home },
      });
      assert.equal(r.code, 0, r.stderr);
      // The model really saw the key (masking is for outputs, not for the conversation).
      assert.ok(JSON.stringify(mock.requests[1].body.messages).includes(KEY), "cat printed it");
      const trajectory = await Deno.readTextFile(`${home}/t.json`);
      for (
        const [name, text] of [["stdout", r.stdout], ["stderr", r.stderr], [
          "trajectory",
          trajectory,
        ]]
      ) {
        assert.ok(!text.includes(KEY), `${name} shows the key:\n${text}`);
        assert.ok(!text.includes([...KEY].reverse().join("")), `${name} shows the reversed key`);
      }
      if (format === "stream-json") {
        const events = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
        const result = events.find((e) => e.type === "tool_result" && e.name === "bash");
        assert.match(result.result, /deploy key: \*\*\*/);
        const call = events.find((e) => e.type === "tool_call" && e.name === "json_edit_tool");
        assert.deepEqual(Object.keys(call.arguments.value), ["***"]);
      }
    } finally {
      await mock.close();
      await Deno.remove(home, { recursive: true });
    }
  });
}

Deno.test("a config-file key printed by the model never reaches the live console in a terminal", async () => {
  const { home, repo, mock } = await setup(true);
  try {
    const args = mockRunArgs(mock, "look", repo, {
      apiKey: null,
      extra: ["-t", `${home}/t.json`, "--sandbox", "none"],
    });
    const r = await runDeftInPty(args, [], { cwd: home, env: { HOME: home } });
    assert.match(r.output, /completed/, r.output);
    assert.ok(JSON.stringify(mock.requests[1].body.messages).includes(KEY), "cat printed it");
    assert.match(r.output, /The key is \*\*\*/);
    assert.ok(!r.output.includes(KEY), r.output);
    assert.ok(!r.output.includes([...KEY].reverse().join("")), r.output);
  } finally {
    await mock.close();
    await Deno.remove(home, { recursive: true });
  }
});
