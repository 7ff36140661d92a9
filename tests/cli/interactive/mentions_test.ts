/**
 * Attacks on `@path` mentions (src/cli/interactive/mentions.ts) from a hostile repository: links
 * leading to the process's environment or to a file outside, a path climbing out, and a link
 * swapped after the check. Nothing outside the workspace is attached.
 */
import assert from "node:assert/strict";
import { readMention } from "../../../src/cli/interactive/mentions.ts";
import { hostWorkplace } from "../../../src/agent/workplace.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("@mentions: links to /proc/self/environ or a file outside, and ../ paths, attach nothing", async () => {
  await using ws = await tempDir("deft-mention-ws-");
  await using outside = await tempDir("deft-mention-out-");
  await Deno.writeTextFile(`${outside.path}/secret.txt`, "TOP-SECRET-CONTENT\n");
  await Deno.symlink("/proc/self/environ", `${ws.path}/env.txt`);
  await Deno.symlink(`${outside.path}/secret.txt`, `${ws.path}/notes.md`);
  await Deno.mkdir(`${ws.path}/docs`);
  await Deno.symlink(outside.path, `${ws.path}/docs/more`);
  for (
    const path of [
      "env.txt",
      "notes.md",
      "docs/more/secret.txt",
      "../" + outside.path.split("/").at(-1) + "/secret.txt",
      `${outside.path}/secret.txt`,
      "/proc/self/environ",
    ]
  ) {
    const m = await readMention(hostWorkplace(ws.path), path);
    assert.ok("refused" in m, `@${path} was attached: ${JSON.stringify(m).slice(0, 200)}`);
  }
});

Deno.test("@mentions: a link swapped to point outside after the check is not read through", async () => {
  await using ws = await tempDir("deft-mention-ws-");
  await using outside = await tempDir("deft-mention-out-");
  await Deno.writeTextFile(`${outside.path}/secret.txt`, "TOP-SECRET-CONTENT\n");
  await Deno.writeTextFile(`${ws.path}/real.txt`, "fine\n");
  await Deno.symlink(`${ws.path}/real.txt`, `${ws.path}/link.txt`);
  // Swap the link many times while mentions are read: no read may return the outside bytes.
  let swapping = true;
  const swapper = (async () => {
    let i = 0;
    while (swapping) {
      const target = i++ % 2 ? `${ws.path}/real.txt` : `${outside.path}/secret.txt`;
      await Deno.symlink(target, `${ws.path}/link.tmp`);
      await Deno.rename(`${ws.path}/link.tmp`, `${ws.path}/link.txt`);
      await new Promise((r) => setTimeout(r, 0));
    }
  })();
  try {
    for (let i = 0; i < 300; i++) {
      const m = await readMention(hostWorkplace(ws.path), "link.txt");
      assert.ok(!("text" in m && m.text.includes("TOP-SECRET")), "read through a swapped link");
    }
  } finally {
    swapping = false;
    await swapper;
  }
});
