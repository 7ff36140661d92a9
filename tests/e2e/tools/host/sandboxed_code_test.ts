/**
 * The sandboxed host sees Deno's cache read-only, so what it compiles it cannot store, and Deno
 * pauses ~150 ms retrying the store at every start (#39). Deft, whose cache is writable, compiles
 * the host's modules first when their stored form is missing or older than the source.
 */
import assert from "node:assert/strict";
import { REPO_ROOT, runDeft } from "../../../helpers/deft.ts";
import { tempDir } from "../../../helpers/temp.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("sandboxed host: one editor call with an empty Deno cache leaves the host's code compiled in it", async () => {
  await using ws = await tempDir("deft-host-code-ws-");
  await using denoCache = await tempDir("deft-host-code-deno-");
  await using deftCache = await tempDir("deft-host-code-deft-");
  await Deno.writeTextFile(`${ws.path}/a.txt`, "one\n");
  const view = JSON.stringify({ command: "view", path: `${ws.path}/a.txt` });
  const run = await runDeft(
    ["tool", "--sandbox", "workspace-write", "str_replace_based_edit_tool", view, "-w", ws.path],
    { env: { DENO_DIR: denoCache.path, DEFT_CACHE_DIR: deftCache.path }, cwd: ws.path },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(JSON.parse(run.stdout).output, /one/);
  const compiled = `${denoCache.path}/gen/file${REPO_ROOT}src/tools`;
  for (const module of ["host/relay.ts", "host/worker.ts", "edit/tool.ts"]) {
    assert.ok(await exists(`${compiled}/${module}.js`), `${module} is compiled in Deno's cache`);
  }
});
