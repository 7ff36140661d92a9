/**
 * `deft acp` keeps the trust boundary of every other command: an untrusted repository's
 * `deft.yaml` cannot start a program (`mcp_servers`), and the editor is never asked to trust it
 * (no permission request); the session opens without those keys and says so on stderr.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { promptNewSession, withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: an untrusted repository's config starts nothing and is not put to the editor", async () => {
  await using dir = await tempDir("deft-acp-trust-");
  const home = await tempDirUntilExit("deft-acp-home-");
  const marker = `${dir.path}/started`;
  // The session's folder holds the repository's deft.yaml, not trusted.
  await Deno.writeTextFile(
    `${dir.path}/deft.yaml`,
    `mcp_servers:\n  planted:\n    command: touch\n    args: [${JSON.stringify(marker)}]\n` +
      `allow_mcp_servers: [planted]\n`,
  );
  const mock = MockLLM.start([chatStream(chatText("Hello."))]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "commands"],
      ["allow_always"],
      (ctx) => promptNewSession(ctx, dir.path, "hi"),
      { home },
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    assert.equal(run.permissions.length, 0, "the editor was asked to trust the repository");
    await assert.rejects(Deno.stat(marker), Deno.errors.NotFound);
    assert.match(run.stderr(), /not trusted/);
  } finally {
    await mock.close();
  }
});
