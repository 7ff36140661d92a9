/**
 * README.md's promises to a new reader (issue 52): it opens with the two commands that work on a
 * fresh machine (the demo, then the tests) and stays short enough to read — under 16 KiB, with the
 * detail in docs/.
 */
import * as assert from "node:assert/strict";

const README = new URL("../README.md", import.meta.url);

Deno.test("README: under 16 KiB, the detail in docs/", () => {
  const size = Deno.statSync(README).size;
  assert.ok(size < 16 * 1024, `README.md is ${size} bytes: move detail to docs/`);
});

Deno.test("README: the first code block is the demo, then the test command", () => {
  const text = Deno.readTextFileSync(README);
  const first = /```sh\n([\s\S]*?)```/.exec(text)?.[1] ?? "";
  const commands = first.split("\n").map((l) => l.replace(/\s+#.*$/, "").trim()).filter(Boolean);
  assert.deepEqual(commands, ["npx -y deno@2.9.6 task -q demo", "npx -y deno@2.9.6 task test"]);
});
