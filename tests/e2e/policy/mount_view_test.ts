/**
 * The host's layout the sandbox is built from (`mountView`) is looked at by Deno itself where Deft
 * may read everything, and by bash where it may not (the permission-fenced tool worker). Both
 * must see the same thing, or a sandbox would come out differently depending on who built it.
 */
import assert from "node:assert/strict";
import { mountView } from "../../../src/policy/sandbox.ts";

const SANDBOX = new URL("../../../src/policy/sandbox.ts", import.meta.url).href;

function shown(view: ReturnType<typeof mountView>): string {
  return JSON.stringify({ hidden: view.hidden, listings: [...view.listings] });
}

Deno.test("mount view: Deno's own look and bash's look agree, symlinks and their targets included", async () => {
  const direct = mountView();
  assert.ok(direct.listings.get("/")?.length, "the root is listed");
  const script = `import { mountView } from ${JSON.stringify(SANDBOX)};\n` +
    `const v = mountView();\n` +
    `console.log(JSON.stringify({ hidden: v.hidden, listings: [...v.listings] }));`;
  // No read permission: the look must go through bash, as in the tool worker.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-prompt", "--allow-run=bash", "--allow-env", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  assert.equal(new TextDecoder().decode(out.stdout).trim(), shown(direct));
});
