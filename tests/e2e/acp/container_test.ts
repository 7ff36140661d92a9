/**
 * `deft acp` with the container flags: the session's tools run inside the container (real
 * Docker and Podman, the test image), a turn streams as in the host case, and the container is removed when
 * the client hangs up.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { testRuntime } from "../../helpers/containers.ts";
import { promptNewSession, updatesOf, withAcp } from "../../helpers/acp_client.ts";

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `acp (${runtime}): a turn runs its command in the container, which goes at the end`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async () => {
    await using rt = await testRuntime(runtime);
    await using dir = await tempDir("deft-acp-container-");
    const mock = MockLLM.start([
      chatStream(
        chatToolCalls([["bash", {
          command: "pwd; test -f /.dockerenv -o -f /run/.containerenv && echo in-container",
        }]]),
      ),
      chatStream(chatText("Checked.")),
    ]);
    try {
      const flags = ["--docker-image", rt.image, "--container-runtime", rt.name, "-w", "/testbed"];
      const { value, code, run } = await withAcp(
        mock,
        [...flags, "--approval", "never"],
        [],
        (ctx) => promptNewSession(ctx, dir.path, "where are you?"),
        { env: rt.env },
      );
      assert.equal(value.stopReason, "end_turn", run.stderr());
      assert.equal(code, 0, run.stderr());
      const [done] = updatesOf(run, "tool_call_update");
      assert.match(JSON.stringify(done.content), /\/testbed[\s\S]*in-container/, run.stderr());
      const id = /started container ([0-9a-f]{12})/.exec(run.stderr())?.[1];
      assert.ok(id, run.stderr());
      await assert.rejects(rt.cli("container", "inspect", id), Error, "the container is gone");
    } finally {
      await mock.close();
    }
  });
}
