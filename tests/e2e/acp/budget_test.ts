/**
 * `deft acp --max-tokens`: a turn that reaches the cap ends before the next model request with
 * `stopReason: max_turn_requests`, and the client is told what was spent against which cap.
 */
import assert from "node:assert/strict";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { promptNewSession, updatesOf, withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: a turn that reaches a budget cap stops with max_turn_requests and says why", async () => {
  await using dir = await tempDir("deft-acp-budget-");
  // Each reply uses 120 tokens; the cap of 100 is reached after the first.
  const mock = MockLLM.start(
    [],
    () => chatToolCalls([["bash", { command: "echo working" }]]),
  );
  const config = `${dir.path}/config.yaml`;
  await Deno.writeTextFile(
    config,
    `model_providers:\n  m: { provider: openai_compatible, base_url: "${mock.url}/v1", api_key: k }\n` +
      `models:\n  m: { model_provider: m, model: mock, max_retries: 0 }\n` +
      `agents:\n  deft_agent: { model: m }\n`,
  );
  try {
    const { value, run } = await withAcp(
      null,
      ["--config-file", config, "--approval", "never", "--max-tokens", "100"],
      [],
      (ctx) => promptNewSession(ctx, dir.path, "work"),
    );
    assert.equal(value.stopReason, "max_turn_requests", run.stderr());
    assert.equal(mock.requests.length, 1, run.stderr());
    const said = updatesOf(run, "agent_message_chunk")
      .map((u) => (u.content as { text?: string }).text ?? "").join("");
    assert.match(said, /Stopped at the budget cap: 120 tokens used, cap 100 tokens/);
  } finally {
    await mock.close();
  }
});
