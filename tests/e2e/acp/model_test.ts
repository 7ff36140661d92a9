/**
 * The model of an ACP session is a config option (category `model`): session/new names the
 * session's model and the configured ones; `session/set_config_option` (and the older
 * `session/set_model`, as acpx's `set model` sends) switches it for the next prompt; a model the
 * configuration does not name is refused with the list to pick from.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: a model chosen over ACP is the one the next prompt's request names", async () => {
  await using dir = await tempDir("deft-acp-model-");
  const mock = MockLLM.start([], () => chatStream(chatText("ok")));
  const config = `${dir.path}/config.yaml`;
  await Deno.writeTextFile(
    config,
    `model_providers:\n  m: { provider: openai_compatible, base_url: "${mock.url}/v1", api_key: k }\n` +
      `models:\n  fast: { model_provider: m, model: model-fast, max_retries: 0 }\n` +
      `  deep: { model_provider: m, model: model-deep, max_retries: 0 }\n` +
      `agents:\n  deft_agent: { model: fast }\n`,
  );
  try {
    const { code, run } = await withAcp(
      null,
      ["--config-file", config, "--approval", "never"],
      [],
      async (ctx) => {
        await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
        const opened = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
        const { sessionId } = opened;
        const model = opened.configOptions?.find((o) => o.category === "model") as
          | { id: string; currentValue: string; options: { value: string }[] }
          | undefined;
        assert.ok(model, JSON.stringify(opened));
        assert.equal(model.currentValue, "fast");
        assert.deepEqual(model.options.map((o) => o.value), ["fast", "deep"]);
        const ask = async () => {
          await ctx.request("session/prompt", {
            sessionId,
            prompt: [{ type: "text", text: "hi" }],
          });
          return mock.requests.at(-1)!.body.model;
        };
        assert.equal(await ask(), "model-fast");

        const set = await ctx.request("session/set_config_option", {
          sessionId,
          configId: model.id,
          value: "deep",
        });
        const now = set.configOptions.find((o) => o.id === model.id) as { currentValue: string };
        assert.equal(now.currentValue, "deep");
        assert.equal(await ask(), "model-deep");

        // A model the configuration does not name: refused, naming the ones to pick.
        await assert.rejects(
          ctx.request("session/set_config_option", { sessionId, configId: "model", value: "gpt" }),
          (e: { code?: number; message?: string; data?: unknown }) =>
            e.code === -32602 && /unknown model "gpt".*'fast', 'deep'/.test(e.message ?? ""),
        );
        assert.equal(await ask(), "model-deep");

        // The older method, as acpx's `set model` sends it.
        await ctx.request("session/set_model", { sessionId, modelId: "fast" });
        assert.equal(await ask(), "model-fast");
      },
    );
    assert.equal(code, 0, run.stderr());
  } finally {
    await mock.close();
  }
});

Deno.test("acp: with only -m, the session's own model is the one offered", async () => {
  await using dir = await tempDir("deft-acp-model-flag-");
  const mock = MockLLM.start([], () => chatStream(chatText("ok")));
  try {
    const { code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const opened = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      const model = opened.configOptions?.find((o) => o.id === "model") as
        | { currentValue: string; options: { value: string }[] }
        | undefined;
      assert.equal(model?.currentValue, "mock-model");
      assert.deepEqual(model?.options.map((o) => o.value), ["mock-model"]);
      await assert.rejects(
        ctx.request("session/set_model", { sessionId: opened.sessionId, modelId: "other" }),
        (e: { code?: number }) => e.code === -32602,
      );
    });
    assert.equal(code, 0, run.stderr());
  } finally {
    await mock.close();
  }
});
