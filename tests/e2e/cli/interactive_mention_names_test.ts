/**
 * Finding 9 (issue 48): a repository file named with escape sequences (a window-title change, a
 * screen clear), completed with Tab after `@` and sent. readline draws what the completion inserts
 * as it is, so the name must reach the terminal spelled out, in a real pty; the file itself is
 * still the one attached (the real name comes back when the line is sent).
 */
import assert from "node:assert/strict";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const ENTER = "\r";
const TAB = "\t";
const CTRL_D = "\x04";
const NAME = "zz\x1b]0;pwned\x07\x1b[2J\x9b2J.txt";

Deno.test("interactive (pty): an @ file name with escapes, completed with Tab and sent, shows inert", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  await Deno.writeTextFile(`${repo}/${NAME}`, "MENTIONED-CONTENT\n");
  const mock = MockLLM.start([chatText("done reading")]);
  try {
    const r = await interactiveInPty(
      repo,
      mock,
      [
        { expect: "deft> ", send: "read @zz" },
        { delay: 0.5, send: TAB },
        { expect: "pwned", delay: 0.5, send: ENTER },
        { expect: "done reading[\\s\\S]*deft> ", send: CTRL_D },
        { expect: "bye" },
      ],
      { cwd: home, env: { HOME: home, XDG_STATE_HOME: `${home}/state` } },
    );
    assert.equal(r.failed, null, r.output);
    // The console's own cursor and line-editing codes are CSI sequences: only those may remain.
    // deno-lint-ignore no-control-regex
    const own = r.output.replace(/\x1b\[[0-9;?]*[A-HJKSTfmnsuhl]|\r/g, "");
    // deno-lint-ignore no-control-regex
    const hit = /[\x1b\x07\x80-\x9f]/.exec(own);
    assert.equal(hit, null, `raw ${JSON.stringify(hit?.[0])}: ${JSON.stringify(own)}`);
    assert.match(r.output, /zz\\x1b\]0;pwned\\x07\\x1b\[2J\\x9b2J\.txt/, "the name, spelled out");
    // The file named was attached: the real name came back when the line was sent.
    const sent = JSON.stringify(mock.requests.map((q) => q.body));
    assert.match(sent, /MENTIONED-CONTENT/);
  } finally {
    await mock.close();
    await Deno.remove(repo, { recursive: true });
  }
});
