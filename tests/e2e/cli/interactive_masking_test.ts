/**
 * Masking in the composer of `deft interactive` (docs/usage.md: `@path` attaches a file's text
 * "secrets masked"; `!command` output is shown and kept as context): with a `.env` in the
 * workspace holding a key, neither an `@.env` mention nor `!cat .env` puts the key on the
 * terminal or in the request the model receives. A real pseudo-terminal and the mock model.
 */
import assert from "node:assert/strict";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { sessionEnv as home } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

/** Shaped like an OpenAI project key, so Deft knows it for a secret wherever it shows up. */
const KEY = "sk-proj-" + "Zq4T9wLm2Rx7Vb1Nc8Kp3Hs6".repeat(2);

// deno-lint-ignore no-explicit-any
function lastUser(body: any): string {
  // deno-lint-ignore no-explicit-any
  return body.messages.filter((m: any) => m.role === "user").at(-1).content;
}

Deno.test("interactive (pty): a key in .env is masked in !cat output and in an @.env attachment, on screen and to the model", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  await Deno.writeTextFile(`${repo}/.env`, `DEBUG=1\nOPENAI_API_KEY=${KEY}\n`);
  const mock = MockLLM.start([chatText("Read.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "!cat .env" + ENTER },
      { expect: "exit code 0[\\s\\S]*deft> ", send: "check @.env" + ENTER, delay: 0.3 },
      { expect: "Read\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // Shown: the command's output, masked; the attachment announced.
    assert.match(out, /DEBUG=1\s+OPENAI_API_KEY=\*\*\*/);
    assert.match(out, /attached @\.env \(2 line\(s\), \d+ bytes\)/);
    assert.ok(!r.output.includes(KEY.slice(8, 32)), "the key reached the terminal");
    // Sent: one request, holding the command's output and the file, both masked.
    assert.equal(mock.requests.length, 1);
    const prompt = lastUser(mock.requests[0].body);
    assert.match(
      prompt,
      /<user-shell-command>[\s\S]*\$ cat \.env\nDEBUG=1\nOPENAI_API_KEY=\*\*\*\n[\s\S]*<\/user-shell-command>/,
    );
    assert.match(
      prompt,
      /<attached-file path="\.env">\nDEBUG=1\nOPENAI_API_KEY=\*\*\*\n<\/attached-file>/,
    );
    const sent = JSON.stringify(mock.requests.map((q) => q.body));
    assert.ok(!sent.includes(KEY.slice(8, 32)), "the key reached the model");
  } finally {
    await mock.close();
  }
});
