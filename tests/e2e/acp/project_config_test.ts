/**
 * Each ACP session reads the project config of its own folder (session/new's `cwd`), with that
 * folder's trust, not the folder the editor started `deft acp` in.
 *
 * Promises, each with the test that guards it:
 * - two sessions in two folders with different `deft.yaml`s each run with their own (a trusted
 *   folder's file whole, an untrusted one's harmless keys over the user's config), and the
 *   folder Deft was started in counts for neither: "acp: two sessions in two folders …"
 */
import assert from "node:assert/strict";
import { chatStream, chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: two sessions in two folders each read their own folder's deft.yaml", async () => {
  await using trusted = await tempDir("deft-acp-proj-a-");
  await using untrusted = await tempDir("deft-acp-proj-b-");
  const home = await tempDirUntilExit("deft-acp-home-");
  const mock = MockLLM.start([chatStream(chatText("A.")), chatStream(chatText("B."))]);
  try {
    const provider = (name: string) =>
      `model_providers:\n  ${name}:\n    provider: openai_compatible\n` +
      `    base_url: ${mock.url}/v1\n    api_key: k\n`;
    const agent = (provider: string, model: string) =>
      `models:\n  main:\n    model_provider: ${provider}\n    model: ${model}\n` +
      `agents:\n  deft_agent:\n    model: main\n`;
    await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
    // The user's config: its own provider and model, and trust for the first folder only.
    await Deno.writeTextFile(
      `${home}/.config/deft/config.yaml`,
      provider("mine") + agent("mine", "model-of-the-user") +
        `trusted_folders: [${JSON.stringify(trusted.path)}]\n`,
    );
    // Where the editor started Deft: a project config that must count for neither session.
    await Deno.writeTextFile(`${home}/deft.yaml`, agent("mine", "model-of-the-start-folder"));
    // Trusted: read whole (its own provider is a key only a trusted folder may set).
    await Deno.writeTextFile(
      `${trusted.path}/deft.yaml`,
      provider("theirs") + agent("theirs", "model-a"),
    );
    // Untrusted: its models and agents (harmless keys) over the user's config.
    await Deno.writeTextFile(`${untrusted.path}/deft.yaml`, agent("mine", "model-b"));
    const { code, run } = await withAcp(null, [], [], async (ctx, run) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      for (const folder of [trusted.path, untrusted.path]) {
        const { sessionId } = await ctx.request("session/new", { cwd: folder, mcpServers: [] });
        const done = await ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "hi" }],
        });
        assert.equal(done.stopReason, "end_turn", run.stderr());
      }
    }, { home });
    assert.equal(code, 0, run.stderr());
    assert.deepEqual(
      mock.requests.map((r) => (r.body as { model: string }).model),
      ["model-a", "model-b"],
      run.stderr(),
    );
  } finally {
    await mock.close();
  }
});
