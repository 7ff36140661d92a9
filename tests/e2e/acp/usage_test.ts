/**
 * `deft acp` tells the client how full the model's context is (`usage_update`) when the
 * configuration gives the model's context window.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { promptNewSession, updatesOf, withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: a turn ends with a usage_update of the context used and its size", async () => {
  await using dir = await tempDir("deft-acp-usage-");
  const mock = MockLLM.start([chatStream(chatText("Short answer."))]);
  const config = `${dir.path}/config.yaml`;
  await Deno.writeTextFile(
    config,
    `model_providers:\n  m: { provider: openai_compatible, base_url: "${mock.url}/v1", api_key: k }\n` +
      `models:\n  m: { model_provider: m, model: mock, max_retries: 0, context_window: 8000 }\n` +
      `agents:\n  deft_agent: { model: m }\n`,
  );
  try {
    const { value, code, run } = await withAcp(
      null,
      ["--config-file", config, "--approval", "never"],
      [],
      (ctx) => promptNewSession(ctx, dir.path, "hi"),
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    // The mock's answer reports 50 prompt and 10 completion tokens.
    assert.deepEqual(
      updatesOf(run, "usage_update").map(({ used, size }) => ({ used, size })),
      [{ used: 60, size: 8000 }],
    );
  } finally {
    await mock.close();
  }
});
