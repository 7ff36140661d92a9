/**
 * Issue 28, finding 4, from the attacker's side: the model's sandboxed shell swaps a workspace
 * folder with a symlink to Deft's code-graph cache (`$DEFT_CACHE_DIR/ckg`, which holds other
 * workspaces' databases) as fast as it can, while the model asks the editor to `create` files in
 * that folder, over and over. No file may appear in the cache and no database there may change:
 * the editors' sandboxed host cannot write the cache at all, and the code graph, which can, runs
 * in a host of its own and writes only its own database, at a path the model never names.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createHostedTools } from "../../../../src/tools/host/mod.ts";
import { ToolExecutor } from "../../../../src/tools/executor.ts";
import { tempDir } from "../../../helpers/temp.ts";
import { pidsByCmdline } from "../../../helpers/bash.ts";

/** Mount point → options ("ro"/"rw"…) of each sandboxed host of workspace `ws` (not bwrap). */
async function hostMounts(ws: string): Promise<Map<string, string>[]> {
  const hosts: Map<string, string>[] = [];
  for (const pid of await pidsByCmdline("__tool-host")) {
    // /proc is read through bash: Deno asks for --allow-all to read it.
    const out = await new Deno.Command("bash", {
      args: [
        "-c",
        'cat "/proc/$1/cmdline"; printf "\\n--\\n"; cat "/proc/$1/mountinfo"',
        "t",
        String(pid),
      ],
      stdout: "piped",
      stderr: "null",
    }).output();
    const [argv, mountinfo = ""] = new TextDecoder().decode(out.stdout).split("\n--\n");
    if (argv.split("\0")[0].endsWith("bwrap") || !argv.includes(ws)) continue;
    const mounts = new Map<string, string>();
    for (const line of mountinfo.split("\n")) {
      const fields = line.split(" ");
      if (fields.length > 5) mounts.set(fields[4], fields[5]);
    }
    hosts.push(mounts);
  }
  return hosts;
}

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

const START_SWAPPER = "python3 swap.py 120 >/dev/null 2>&1 & " +
  "until [ -e running ]; do sleep 0.05; done; echo swapping";

/** How long the model keeps creating files while the folder is swapped. */
const RACE_MS = 20_000;
/** Calls at most, should the machine be fast. */
const RACE_CALLS = 6_000;

/** Name to content of every file under `dir`, recursively. */
async function files(dir: string, prefix = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) Object.assign(out, await files(path, `${prefix}${entry.name}/`));
    else out[`${prefix}${entry.name}`] = entry.isFile ? await Deno.readTextFile(path) : "(link)";
  }
  return out;
}

Deno.test("sandboxed host: a folder swapped for a symlink into Deft's cache never gets a file written there", async () => {
  // The cache where users have it, under $HOME: visible (read-only) to the model's shell.
  await using cacheDir = await tempDir(".deft-cache-race-", { dir: Deno.env.get("HOME") });
  await using wsDir = await tempDir("deft-cache-race-ws-");
  await using tempParent = await tempDir("deft-cache-race-temp-");
  const ws = wsDir.path;
  const ckg = join(cacheDir.path, "ckg");
  await Deno.mkdir(ckg);
  // Another workspace's database, which the attack would overwrite or sit beside.
  await Deno.writeTextFile(join(ckg, "other-0123456789abcdef.db"), "another workspace's graph\n");
  await Deno.writeTextFile(join(ws, "lib.py"), "def helper():\n    return 1\n");
  const tools = await createHostedTools(
    { provider: "anthropic", workspace: ws, settings: { sandbox: "workspace-write" } },
    ["str_replace_based_edit_tool", "bash", "ckg"],
    { cache: cacheDir.path, temp: tempParent.path },
  );
  const executor = new ToolExecutor(tools);
  let n = 0;
  const call = (name: string, args: Record<string, unknown>) =>
    executor.executeToolCall({ name, call_id: `c${n++}`, arguments: args });
  try {
    // The code graph works, and its own database is the only thing it adds to the cache.
    const found = await call("ckg", { command: "search_function", path: ws, identifier: "helper" });
    assert.ok(found.success, String(found.error));
    assert.match(String(found.output), /lib\.py/);
    const graphFiles = Object.keys(await files(ckg));
    // Two hosts now: the editors' cannot write the cache; the code graph's writes only it.
    assert.ok(
      (await call("str_replace_based_edit_tool", { command: "view", path: ws })).success,
    );
    const hosts = await hostMounts(ws);
    assert.equal(hosts.length, 2, "the editors' host and the code graph's");
    const graphHost = hosts.find((m) => m.has(ckg));
    const editorsHost = hosts.find((m) => !m.has(ckg));
    assert.ok(graphHost && editorsHost);
    assert.match(graphHost.get(ckg)!, /^rw\b/, "the code graph's host writes its cache folder");
    assert.match(graphHost.get(ws)!, /^ro\b/, "and only reads the workspace");
    assert.match(editorsHost.get(ws)!, /^rw\b/, "the editors' host writes the workspace");
    assert.deepEqual(
      [...editorsHost.keys()].filter((m) => m.startsWith(cacheDir.path)),
      [],
      "and nothing of Deft's cache is mounted writable there",
    );
    const before = await files(ckg);

    await Deno.mkdir(join(ws, "d"));
    await Deno.symlink(ckg, join(ws, "link"));
    await Deno.writeTextFile(join(ws, "swap.py"), SWAPPER);
    const started = await call("bash", { command: START_SWAPPER });
    assert.equal(started.output, "swapping\n", String(started.error));
    let calls = 0;
    let created = 0;
    const end = Date.now() + RACE_MS;
    while (Date.now() < end && calls < RACE_CALLS) {
      const r = await call("str_replace_based_edit_tool", {
        command: "create",
        path: join(ws, "d", `pwned_${calls}.txt`),
        file_text: "pwned\n",
      });
      calls++;
      if (r.success) created++;
    }
    await Deno.writeTextFile(join(ws, "stop"), "");
    const swaps = await call("bash", { command: "wait; cat swaps" });
    assert.ok(Number(swaps.output) > 100, `the race really ran (${swaps.output} swaps)`);
    assert.ok(created > 0, `some of the ${calls} creates got through (into the workspace)`);

    const after = await files(ckg);
    const planted = Object.keys(after).filter((name) => name.includes("pwned"));
    assert.deepEqual(planted, [], `files the model created in Deft's cache (of ${calls} calls)`);
    assert.equal(after["other-0123456789abcdef.db"], "another workspace's graph\n");
    // The graph's own files may have grown (its watcher follows the workspace); no new names.
    assert.deepEqual(
      Object.keys(after).filter((name) =>
        !graphFiles.includes(name) && !/-(wal|shm|journal)$/.test(name)
      ),
      [],
      `new files in the cache: ${JSON.stringify(Object.keys(after))} (was ${
        JSON.stringify(Object.keys(before))
      })`,
    );
  } finally {
    await Deno.writeTextFile(join(ws, "stop"), "").catch(() => {});
    await executor.closeTools();
  }
});

Deno.test("sandboxed host: a graph folder inside the workspace (Deft run on $HOME) is still written to disk", async () => {
  await using wsDir = await tempDir("deft-cache-inside-ws-");
  const ws = wsDir.path;
  const ckgDir = join(ws, ".cache", "deft", "ckg");
  await Deno.writeTextFile(join(ws, "lib.py"), "def helper():\n    return 1\n");
  const tools = await createHostedTools(
    { provider: "anthropic", workspace: ws, settings: { sandbox: "workspace-write", ckgDir } },
    ["ckg"],
  );
  const executor = new ToolExecutor(tools);
  try {
    const found = await executor.executeToolCall({
      name: "ckg",
      call_id: "c",
      arguments: { command: "search_function", path: ws, identifier: "helper" },
    });
    assert.ok(found.success, String(found.error));
    assert.match(String(found.output), /lib\.py/);
    assert.ok(
      Object.keys(await files(ckgDir)).some((name) => name.endsWith(".db")),
      "the graph's database is on disk, not only in memory",
    );
  } finally {
    await executor.closeTools();
  }
});
