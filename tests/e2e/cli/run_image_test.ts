/**
 * `deft run --image FILE`: the image goes with the task in the provider's own image format
 * (Anthropic's base64 image block here); a file that is not an image is refused before any call.
 */
import assert from "node:assert/strict";
import { anthropicToolUses, MockLLM } from "../../helpers/mock_llm.ts";
import { runDeft } from "../../helpers/deft.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

const GIF = Uint8Array.of(0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0);

Deno.test("run --image: an Anthropic request carries the image as a base64 image block", async () => {
  const repo = await makeBuggyRepo();
  const home = await tempDirUntilExit("deft-home-");
  await Deno.writeFile(`${home}/shot.gif`, GIF);
  const mock = MockLLM.start([anthropicToolUses([["task_done", {}]], "a tiny gif")]);
  try {
    const r = await runDeft([
      "run",
      "what is this?",
      "--image",
      `${home}/shot.gif`,
      "-w",
      repo,
      "-p",
      "anthropic",
      "-m",
      "claude-x",
      "--model-base-url",
      mock.url,
      "-k",
      "k",
    ], { cwd: home, env: { HOME: home, XDG_STATE_HOME: `${home}/state` } });
    assert.equal(r.code, 0, r.stderr);
    // deno-lint-ignore no-explicit-any
    const blocks = mock.requests[0].body.messages.flatMap((m: any) => m.content);
    // deno-lint-ignore no-explicit-any
    const image = blocks.find((b: any) => b.type === "image");
    assert.deepEqual(image?.source, {
      type: "base64",
      media_type: "image/gif",
      data: btoa(String.fromCharCode(...GIF)),
    });
  } finally {
    await mock.close();
  }
});

Deno.test("run --image: a file that is not an image is refused before any model call", async () => {
  const home = await tempDirUntilExit("deft-home-");
  await Deno.writeTextFile(`${home}/fake.png`, "text\n");
  const mock = MockLLM.start([]);
  try {
    const r = await runDeft([
      "run",
      "what is this?",
      "--image",
      `${home}/fake.png`,
      "-w",
      home,
      "-p",
      "anthropic",
      "-m",
      "claude-x",
      "--model-base-url",
      mock.url,
      "-k",
      "k",
    ], { cwd: home, env: { HOME: home, XDG_STATE_HOME: `${home}/state` } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /not a PNG, JPEG, GIF or WebP image/);
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});
