/**
 * The editor against a rename-exchange race: the model's sandboxed shell swaps a workspace folder
 * with a symlink to a folder outside, over and over, while 500 editor calls use paths inside that
 * folder. Nothing outside is changed or created, and no outside content is ever returned.
 */
import assert from "node:assert/strict";
import { hasAllPermissions, runWithAllPermissions } from "../../helpers/full_permissions.ts";
import { BashTool } from "../../../src/tools/bash/tool.ts";
import { withEditor, withOutsideDir } from "./helpers.ts";

// renameat2(RENAME_EXCHANGE) swaps the two names atomically, as fast as it can.
const SWAPPER = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
end = time.time() + float(sys.argv[1])
swaps = 0
open("running", "w").close()
while time.time() < end and not os.path.exists("stop"):
    if libc.renameat2(-100, b"d", -100, b"link", 2) == 0:
        swaps += 1
open("swaps", "w").write(str(swaps) if swaps else "0 errno %d" % ctypes.get_errno())
`;

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const entry of Deno.readDir(dir)) {
    out[entry.name] = entry.isFile ? await Deno.readTextFile(`${dir}/${entry.name}`) : "(dir)";
  }
  return out;
}

Deno.test("editor: a folder swapped for a symlink by the sandboxed shell never leads outside", async () => {
  if (!hasAllPermissions()) {
    return await runWithAllPermissions(
      import.meta.url,
      "editor: a folder swapped for a symlink by the sandboxed shell never leads outside",
    );
  }
  await withOutsideDir(async (outside) => {
    await Deno.writeTextFile(`${outside}/f.txt`, "OUTSIDE-SECRET alpha\n");
    const before = await snapshot(outside);
    await withEditor(async ({ ws, call }) => {
      await Deno.mkdir(`${ws}/d`);
      await Deno.writeTextFile(`${ws}/d/f.txt`, "inside alpha\n");
      await Deno.symlink(outside, `${ws}/link`);
      await Deno.writeTextFile(`${ws}/swap.py`, SWAPPER);
      const shell = new BashTool({
        provider: "anthropic",
        workspace: ws,
        settings: { sandbox: "workspace-write" },
      });
      try {
        const started = await shell.execute({
          command: "python3 swap.py 120 >/dev/null 2>&1 & " +
            "until [ -e running ]; do sleep 0.05; done; echo swapping",
        });
        assert.equal(started.output, "swapping\n", String(started.error));
        const results = [];
        for (let i = 0; i < 500; i++) {
          const path = `${ws}/d/f.txt`;
          const args = [
            { command: "view", path },
            { command: "str_replace", path, old_str: "alpha", new_str: "beta" },
            { command: "str_replace", path, old_str: "beta", new_str: "alpha" },
            { command: "create", path: `${ws}/d/new-${i}.txt`, file_text: "made\n" },
            { command: "insert", path, insert_line: 0, insert_text: `line ${i}\n` },
          ][i % 5];
          results.push(await call(args));
        }
        await Deno.writeTextFile(`${ws}/stop`, "");
        await shell.execute({ command: "wait; cat swaps" }).then((r) => {
          assert.ok(Number(r.output) > 100, `the race really ran (${r.output} swaps)`);
        });
        for (const r of results) {
          assert.ok(!String(r.output).includes("OUTSIDE"), `outside content read: ${r.output}`);
          assert.ok(!String(r.error).includes("OUTSIDE"), `outside content read: ${r.error}`);
        }
        assert.ok(results.some((r) => r.success), "many calls still worked");
      } finally {
        await Deno.writeTextFile(`${ws}/stop`, "").catch(() => {});
        await shell.close();
      }
    });
    assert.deepEqual(await snapshot(outside), before, "nothing outside changed or appeared");
  });
});
