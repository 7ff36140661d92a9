/**
 * Finding 11 (issue 28) for `deft interactive`, from the attacker's side: the model's answer and
 * a tool name carry OSC 52, a screen clear, a one-byte CSI and bidi characters; `/model` echoes a
 * hostile model id. What reaches the real terminal has none of them raw.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const ENTER = "\r";
const CTRL_D = "\x04";
const EVIL = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b2J\u202e\u200b";

Deno.test("interactive (pty): a hostile answer, tool name and model id reach the terminal inert", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const mock = MockLLM.start([
    chatToolCalls([[`bash${EVIL}`, { command: "ls" }]], ""),
    chatText(`answer${EVIL}end`),
  ]);
  try {
    const r = await interactiveInPty(
      repo,
      mock,
      [
        { expect: "deft> ", send: "go" + ENTER },
        { expect: "answer[\\s\\S]*deft> ", send: "/model" + ENTER },
        { expect: "model: [\\s\\S]*deft> ", send: CTRL_D },
        { expect: "bye" },
      ],
      { model: `mock${EVIL}`, cwd: home, env: { HOME: home, XDG_STATE_HOME: `${home}/state` } },
    );
    assert.equal(r.failed, null, r.output);
    assert.match(r.output, /answer␛\]52;c;/);
    // The console's own colour, cursor and line-editing codes are ESC sequences too: only those may remain.
    // deno-lint-ignore no-control-regex
    const own = r.output.replace(/\x1b\[[0-9;?]*[A-Za-z]|\r/g, "");
    // deno-lint-ignore no-control-regex
    const hit = /[\x1b\x07\x80-\x9f\u202e\u200b]/.exec(own);
    assert.equal(hit, null, `raw ${JSON.stringify(hit?.[0])}: ${JSON.stringify(own)}`);
  } finally {
    await mock.close();
    await Deno.remove(repo, { recursive: true });
  }
});
