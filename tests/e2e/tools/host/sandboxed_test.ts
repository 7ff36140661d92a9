/**
 * With a sandbox, the tools that touch files run in `deft __tool-host` inside bubblewrap (#14):
 * in its own mount and PID namespaces, the root read-only and the workspace writable, without
 * Deft's secrets, behind the worker's Deno permissions still, replaced cleanly when it dies,
 * never replaced by an unsandboxed fallback, and gone when Deft is killed.
 */
import assert from "node:assert/strict";
import { basename } from "node:path";
import type { Tool, ToolContext } from "../../../../src/tools/base.ts";
import {
  createHostedTools,
  hostDirs,
  type ToolHost,
  workerEntry,
} from "../../../../src/tools/host/mod.ts";
import { sandboxedHostLaunch } from "../../../../src/tools/host/sandboxed.ts";
import { drawBoundary, sessionTemp } from "../../../../src/policy/boundary.ts";
import { runChild } from "../../../../src/policy/process.ts";
import type { StandInTool } from "../../../../src/tools/stand_in.ts";
import { ToolExecutor } from "../../../../src/tools/executor.ts";
import { eventually, pidsByCmdline } from "../../../helpers/bash.ts";
import { ServerProcess } from "../../../helpers/server_process.ts";
import { tempDir } from "../../../helpers/temp.ts";

const EDITOR = "str_replace_based_edit_tool";

async function withSandboxedTools(
  fn: (t: { ws: string; cache: string; tools: Tool[]; call: CallFn }) => Promise<void>,
  settings: ToolContext["settings"] = { sandbox: "workspace-write" },
): Promise<void> {
  await using wsTemp = await tempDir("deft-sandboxed-host-");
  const ws = wsTemp.path;
  await using cacheDir = await tempDir("deft-sandboxed-cache-");
  const cache = cacheDir.path;
  const context: ToolContext = { provider: "anthropic", workspace: ws, settings };
  const tools = await createHostedTools(context, [EDITOR, "json_edit_tool", "bash"], { cache });
  const executor = new ToolExecutor(tools);
  let n = 0;
  const call: CallFn = (name, args) =>
    executor.executeToolCall({ name, call_id: `c${n++}`, arguments: args });
  try {
    await fn({ ws, cache: await Deno.realPath(cache), tools, call });
  } finally {
    await executor.closeTools();
  }
}

type CallFn = (
  name: string,
  args: Record<string, unknown>,
) => Promise<{ success: boolean; output?: string | null; error?: string | null }>;

// /proc is read through bash: Deno asks for --allow-all to read it, the test task does not grant it.
async function proc(script: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: ["-c", script, "deft-test", ...args],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

/** The Deno process serving as the sandboxed host for workspace `ws` (not its bwrap parents). */
async function hostPid(ws: string): Promise<number | undefined> {
  for (const pid of await pidsByCmdline("__tool-host")) {
    const argv = await proc('cat "/proc/$1/cmdline"', String(pid));
    const [program] = argv.split("\0");
    if (basename(program) !== "bwrap" && argv.includes(ws)) return pid;
  }
  return undefined;
}

/** Mount point → options ("ro"/"rw"…) as the process `pid` sees its mounts. */
async function mountsOf(pid: number): Promise<Map<string, string>> {
  const mounts = new Map<string, string>();
  for (const line of (await proc('cat "/proc/$1/mountinfo"', String(pid))).split("\n")) {
    const fields = line.split(" ");
    if (fields.length > 5) mounts.set(fields[4].replace(/\\040/g, " "), fields[5]);
  }
  return mounts;
}

Deno.test("sandboxed host: the editor runs in bubblewrap: own namespaces, / read-only, the workspace writable", async () => {
  await withSandboxedTools(async ({ ws, cache, call }) => {
    const made = await call(EDITOR, { command: "create", path: `${ws}/a.txt`, file_text: "a\n" });
    assert.ok(made.success, String(made.error));
    const pid = await hostPid(ws);
    assert.ok(pid, "a __tool-host process serves the editor");
    for (const ns of ["mnt", "pid", "net"]) {
      const [theirs, ours]: string[] = (await proc(
        'readlink "/proc/$1/ns/$2" "/proc/$PPID/ns/$2"',
        String(pid),
        ns,
      )).split("\n");
      assert.ok(theirs && ours, `both ${ns} namespaces are known`);
      assert.notEqual(theirs, ours, `the host has its own ${ns} namespace`);
    }
    const mounts = await mountsOf(pid);
    assert.match(mounts.get("/") ?? "", /^ro\b/, "the root is read-only inside");
    assert.match(mounts.get(ws) ?? "", /^rw\b/, "the workspace is writable inside");
    // Only the code graph's own host writes Deft's cache (below); the editors' cannot.
    assert.equal(mounts.has(`${cache}/ckg`), false, "the code graph's cache is not writable here");
    assert.equal(mounts.has(cache), false, "nor the rest of Deft's cache");
    assert.equal(mounts.has("/tmp"), true, "/tmp is a private mount");
    // The shell does not run in the host: it starts its own bubblewrap, as before.
    const shell = await call("bash", { command: "echo $$; ls /proc | grep -c '^[0-9]'" });
    assert.ok(shell.success, String(shell.error));
  });
});

Deno.test("sandboxed host: it gets none of Deft's secrets, only core variables", async () => {
  Deno.env.set("DEFT_TEST_SECRET_TOKEN", "tok-sandboxed-host-1234");
  Deno.env.set("DEFT_TEST_PLAIN", "plain-value");
  try {
    await withSandboxedTools(async ({ ws, call }) => {
      await call(EDITOR, { command: "create", path: `${ws}/a.txt`, file_text: "a\n" });
      const pid = await hostPid(ws);
      assert.ok(pid);
      const environ = await proc('cat "/proc/$1/environ"', String(pid));
      assert.ok(!environ.includes("tok-sandboxed-host-1234"), "no secret");
      assert.ok(!environ.includes("plain-value"), "no variable the host does not need");
      assert.match(environ, /(^|\0)PATH=/);
    });
  } finally {
    Deno.env.delete("DEFT_TEST_SECRET_TOKEN");
    Deno.env.delete("DEFT_TEST_PLAIN");
  }
});

Deno.test("sandboxed host: Deno's permissions still fence the worker inside", async () => {
  await withSandboxedTools(async ({ ws, tools }) => {
    const editor = tools.find((t) => t.name === EDITOR) as StandInTool<ToolHost>;
    const home = Deno.env.get("HOME")!;
    assert.equal(await editor.host.probe({ action: "write", target: `${ws}/p.txt` }), "allowed");
    assert.match(
      await editor.host.probe({ action: "write", target: `${home}/deft-probe.txt` }),
      /outside the workspace.*refused by Deno's permissions/,
    );
    assert.match(
      await editor.host.probe({ action: "run", target: "python3" }),
      /not allowed for tools/,
    );
    assert.match(
      await editor.host.probe({ action: "fetch", target: "http://127.0.0.1:4317/" }),
      /Network access.*not allowed/,
    );
  });
});

Deno.test("sandboxed host: a killed host is replaced: the next call starts a fresh one and works", async () => {
  await withSandboxedTools(async ({ ws, call }) => {
    await Deno.writeTextFile(`${ws}/a.txt`, "one\n");
    assert.ok((await call(EDITOR, { command: "view", path: `${ws}/a.txt` })).success);
    const pid = await hostPid(ws);
    assert.ok(pid);
    Deno.kill(pid, "SIGKILL");
    assert.ok(await eventually(async () => (await hostPid(ws)) === undefined), "host gone");
    const after = await call(EDITOR, { command: "view", path: `${ws}/a.txt` });
    const again = after.success
      ? after
      : await call(EDITOR, { command: "view", path: `${ws}/a.txt` });
    if (!after.success) assert.match(String(after.error), /tool host stopped.*exited/);
    assert.ok(again.success, String(again.error));
    assert.match(String(again.output), /one/);
    const fresh = await hostPid(ws);
    assert.ok(fresh && fresh !== pid, "a new host serves the next call");
  });
});

Deno.test("sandboxed host: without bwrap the editor refuses with install instructions, never runs unsandboxed", async () => {
  await withSandboxedTools(async ({ ws, call }) => {
    await Deno.writeTextFile(`${ws}/a.txt`, "secret-ish content\n");
    for (
      const args of [
        { command: "view", path: `${ws}/a.txt` },
        { command: "create", path: `${ws}/b.txt`, file_text: "b\n" },
      ]
    ) {
      const r = await call(EDITOR, args);
      assert.equal(r.success, false);
      assert.match(String(r.error), /needs bubblewrap.*apt-get install -y bubblewrap/s);
      assert.ok(!String(r.output ?? "").includes("secret-ish"));
    }
    await assert.rejects(Deno.stat(`${ws}/b.txt`), Deno.errors.NotFound);
  }, { sandbox: "workspace-write", bwrapPath: "/nonexistent/bwrap" });
});

Deno.test("sandboxed host: SIGKILL of `deft serve` takes the sandboxed host with it", async () => {
  const wsTemp = await tempDir("deft-sandboxed-serve-");
  const ws = wsTemp.path;
  try {
    await Deno.writeTextFile(`${ws}/a.txt`, "x\n");
    const serve = new ServerProcess(["serve", "--sandbox", "workspace-write", "-w", ws]);
    await serve.sendJson({ name: EDITOR, arguments: { command: "view", path: `${ws}/a.txt` } });
    assert.equal((await serve.next()).success, true, serve.stderr);
    assert.ok(await hostPid(ws), "the host runs");
    serve.child.kill("SIGKILL");
    await serve.child.status;
    assert.ok(await eventually(async () => (await hostPid(ws)) === undefined), "host gone");
  } finally {
    await wsTemp.remove();
  }
});

Deno.test("sandboxed host: Deno's cache in /tmp (a CI job's HOME) is shown to it, read-only", async () => {
  // The host's compiled code lives in Deno's cache; the sandbox's private /tmp hid a cache there,
  // and every start compiled the host's code again.
  await using cache = await tempDir("deft-deno-dir-", { dir: "/tmp" });
  await using wsTemp = await tempDir("deft-sandboxed-cache-view-");
  const marker = `${cache.path}/compiled`;
  await Deno.writeTextFile(marker, "compiled code\n");
  const saved = Deno.env.get("DENO_DIR");
  Deno.env.set("DENO_DIR", cache.path);
  const settings: ToolContext["settings"] = { sandbox: "workspace-write" };
  const dirs = hostDirs(settings);
  const temp = sessionTemp(dirs);
  try {
    const context: ToolContext = { provider: "anthropic", workspace: wsTemp.path, settings };
    const boundary = drawBoundary(context, dirs, workerEntry(), temp);
    const inside = ["bash", "-c", `cat "$1"; echo changed > "$1"`, "bash", marker];
    const launch = sandboxedHostLaunch(settings, "sandboxed", boundary, workerEntry(), inside);
    const out = await runChild(launch);
    assert.equal(new TextDecoder().decode(out.stdout), "compiled code\n", "the cache is seen");
    assert.equal(await Deno.readTextFile(marker), "compiled code\n", "and not written");
  } finally {
    if (saved === undefined) Deno.env.delete("DENO_DIR");
    else Deno.env.set("DENO_DIR", saved);
    temp?.remove();
  }
});
