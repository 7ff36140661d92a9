import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../helpers/mock_llm.ts";
import { plain, runDeftInPty } from "../helpers/pty.ts";
import { makeBuggyRepo } from "../helpers/repo.ts";

const ENTER = "\r";
const CTRL_D = "\x04";
const UP = "\x1b[A";

async function home(): Promise<{ home: string; env: Record<string, string> }> {
  const dir = await Deno.makeTempDir({ prefix: "deft-home-" });
  return { home: dir, env: { HOME: dir, XDG_STATE_HOME: `${dir}/state` } };
}

function modelArgs(mock: MockLLM): string[] {
  return ["-p", "openai_compatible", "-m", "mock", "--model-base-url", `${mock.url}/v1`, "-k", "k"];
}

// deno-lint-ignore no-explicit-any
const userTexts = (req: any): string[] =>
  // deno-lint-ignore no-explicit-any
  req.body.messages.filter((m: any) => m.role === "user").map((m: any) => m.content);

Deno.test("interactive (pty): a conversation; text answers end turns; slash commands stay local; history survives a restart", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    chatText("The answer is 42."),
    chatText("Earlier I said 42."),
    chatText("Asked again."),
  ]);
  try {
    const first = await runDeftInPty(["interactive", "-w", repo, ...modelArgs(mock)], [
      { expect: "deft> ", send: "/help" + ENTER },
      { expect: "Commands:[\\s\\S]*deft> ", send: "/bogus" + ENTER },
      { expect: "unknown command /bogus[\\s\\S]*deft> ", send: "what is the answer" + ENTER },
      { expect: "The answer is 42\\.[\\s\\S]*deft> ", send: "what did you just say" + ENTER },
      { expect: "Earlier I said 42\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: h, env });
    const out = plain(first.output);
    assert.equal(first.failed, null, out);
    assert.equal(first.code, 0, out);
    assert.equal(mock.requests.length, 2, "/help and /bogus never reach the model");
    const second = mock.requests[1].body.messages;
    assert.deepEqual(
      // deno-lint-ignore no-explicit-any
      second.slice(1).map((
        m: any,
      ) => [m.role, m.content.replace(/^\[Project root[^]*\[Task\]:\n/, "").trim()]),
      [
        ["user", "what is the answer"],
        ["assistant", "The answer is 42."],
        ["user", "what did you just say"],
      ],
      "the second prompt sees the first turn",
    );
    const history = await Deno.readTextFile(`${h}/state/deft/history`);
    assert.match(history, /what did you just say/);

    // A new session: the up arrow recalls the last prompt of the previous one.
    const again = await runDeftInPty(["interactive", "-w", repo, ...modelArgs(mock)], [
      { expect: "deft> ", send: UP },
      { expect: "what did you just say", send: ENTER },
      { expect: "Asked again\\.[\\s\\S]*deft> ", send: "/exit" + ENTER },
      { expect: "bye" },
    ], { cwd: h, env });
    assert.equal(again.failed, null, plain(again.output));
    assert.equal(again.code, 0);
    assert.deepEqual(
      userTexts(mock.requests[2]).map((t) => t.replace(/^[^]*\[Task\]:\n/, "").trim()),
      [
        "what did you just say",
      ],
      "a new session starts a new conversation with the recalled prompt",
    );
  } finally {
    await mock.close();
  }
});
