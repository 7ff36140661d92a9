/**
 * With `sandbox: none` the shell lives in its own PID namespace: bwrap's, or, where bwrap is
 * missing or cannot make one, util-linux `unshare`'s. Everything it starts ends with it: at close,
 * and when Deft itself is killed. Real bash, real bwrap and unshare.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ToolSettings } from "../../../../src/tools/base.ts";
import { eventually, harness, pidsByCmdline, withHarness } from "../../../helpers/bash.ts";
import { tempDir } from "../../../helpers/temp.ts";

/** No bwrap: the fallback is all there is. */
const UNSHARE: ToolSettings = { bwrapPath: "/nonexistent/bwrap" };

function unique(): string {
  return String(crypto.getRandomValues(new Uint32Array(1))[0]);
}

/** Processes that leave the shell's group and clear their environment, then a double fork. */
function escapers(tag: string): string {
  return `setsid env -i sleep 1021.${tag} >/dev/null 2>&1 & ( sleep 1022.${tag} >/dev/null 2>&1 & )`;
}

Deno.test("namespace: without bwrap, unshare holds the shell; setsid env -i and a double fork die at close", async () => {
  const h = await harness(UNSHARE);
  const tag = unique();
  try {
    // The first process of the shell's namespace is unshare's small init, not bwrap.
    const init = await h.run("tr '\\0' ' ' < /proc/1/cmdline");
    assert.match(
      init.output!,
      /^bash --noprofile --norc -c .* deft-init bash/s,
      String(init.error),
    );
    const r = await h.run(`${escapers(tag)}; echo started`);
    assert.equal(r.output, "started\n");
    assert.ok(await eventually(async () => (await pidsByCmdline(`.${tag}`)).length === 2));
  } finally {
    await h.dispose();
  }
  assert.ok(
    await eventually(async () => (await pidsByCmdline(`.${tag}`)).length === 0),
    `${await pidsByCmdline(`.${tag}`)} survived the close`,
  );
});

Deno.test("namespace: under unshare the shell behaves as under bwrap (timeouts, exit status, kill -9 $$)", async () => {
  await withHarness(UNSHARE, async (h) => {
    await h.run("export KEEP=kept");
    const slow = await h.run("sleep 30; touch ran-on", { timeout: 0.5 });
    assert.equal(slow.error_code, 124);
    assert.match(slow.error!, /shell is still usable/);
    assert.equal((await h.run('echo "$KEEP"')).output, "kept\n");
    const exited = await h.run("exit 3");
    assert.equal(exited.error_code, 3);
    const killed = await h.run("kill -9 $$");
    assert.equal(killed.error_code, 137);
    assert.match(killed.error!, /The shell was killed by SIGKILL/);
    assert.doesNotMatch(killed.error!, /deft-init|Killed/, "the init's job notices stay hidden");
    assert.equal((await h.run("echo back")).output, "back\n");
    await assert.rejects(() => Deno.stat(`${h.workspace}/ran-on`), Deno.errors.NotFound);
  });
});

/** A Deft stand-in: a shell with background escapers, then a foreground command it waits on. */
function deftScript(workspace: string, settings: ToolSettings, tag: string): string {
  const tool = new URL("../../../../src/tools/bash/tool.ts", import.meta.url).href;
  return `import { BashTool } from ${JSON.stringify(tool)};
const t = new BashTool({ provider: "x", workspace: ${JSON.stringify(workspace)},
  settings: ${JSON.stringify(settings)} });
await t.execute({ command: ${JSON.stringify(escapers(tag))} });
console.log("ready");
await t.execute({ command: "sleep 1023.${tag}", timeout: 600 });
`;
}

for (
  const [name, settings] of [["bwrap", {}], ["unshare", UNSHARE]] as [string, ToolSettings][]
) {
  Deno.test(`namespace (${name}): when Deft is killed with SIGKILL, everything the shell started dies`, async () => {
    await using workspaceDir = await tempDir("deft-ns-test-");
    const workspace = workspaceDir.path;
    const tag = unique();
    const script = join(workspace, "deft.ts");
    await Deno.writeTextFile(script, deftScript(workspace, settings, tag));
    const deft = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-check", script],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    try {
      const reader = deft.stdout.pipeThrough(new TextDecoderStream()).getReader();
      assert.equal((await reader.read()).value, "ready\n");
      reader.releaseLock();
      // The two escapers and the foreground command Deft is waiting on.
      assert.ok(await eventually(async () => (await pidsByCmdline(`.${tag}`)).length === 3));
      deft.kill("SIGKILL");
      await deft.status;
      assert.ok(
        await eventually(async () => (await pidsByCmdline(`.${tag}`)).length === 0),
        `${await pidsByCmdline(`.${tag}`)} outlived Deft`,
      );
    } finally {
      try {
        deft.kill("SIGKILL");
      } catch { /* already gone */ }
      await deft.stdout.cancel().catch(() => {});
    }
  });
}

Deno.test({
  name: "namespace: a user who is not root gets the unshare fallback too (own uid kept)",
  fn: async () => {
    await using tmp = await tempDir("deft-ns-user-");
    const dir = tmp.path;
    await Deno.chmod(dir, 0o777);
    const tag = unique();
    // The other user runs a copy of Deft's code: the checkout may sit where only root can read
    // (a clone in a 0700 temp folder).
    const copied = await new Deno.Command("cp", {
      args: ["-r", new URL("../../../../src", import.meta.url).pathname, join(dir, "src")],
    }).output();
    assert.ok(copied.success, "Deft's code copied for the other user");
    await new Deno.Command("chmod", { args: ["-R", "a+rX", join(dir, "src")] }).output();
    const tool = `file://${join(dir, "src", "tools", "bash", "tool.ts")}`;
    const script = join(dir, "deft.ts");
    await Deno.writeTextFile(
      script,
      `import { BashTool } from ${JSON.stringify(tool)};
const t = new BashTool({ provider: "x", workspace: ${JSON.stringify(dir)},
  settings: ${JSON.stringify(UNSHARE)} });
const r = await t.execute({ command: "id -u; tr '\\\\0' ' ' < /proc/1/cmdline; echo" });
await t.execute({ command: ${JSON.stringify(escapers(tag))} });
const seen = await t.execute({ command: ${JSON.stringify(countLoop(tag))} });
console.log(JSON.stringify([r.output, seen.output]));
await t.close();
`,
    );
    // Root becomes nobody for this; anyone else is already a user who is not root.
    const root = Deno.uid() === 0;
    assert.ok(!root || hasSetpriv(), "root runs this test as nobody, which needs setpriv");
    const uid = root ? 65534 : Deno.uid();
    const drop = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"];
    const argv = [...(root ? drop : []), Deno.execPath(), "run", "-A", "--no-check", script];
    const out = await new Deno.Command(argv[0], {
      args: argv.slice(1),
      env: { HOME: dir, DENO_DIR: join(dir, "deno") },
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const [who, seen] = JSON.parse(text);
    assert.match(who, new RegExp(`^${uid}\\nbash --noprofile --norc -c .* deft-init bash`, "s"));
    assert.equal(seen, "2\n", "both escapers ran in the shell's namespace");
    assert.ok(
      await eventually(async () => (await pidsByCmdline(`.${tag}`)).length === 0),
      "the escapers outlived the close",
    );
  },
});

/** Waits (a few seconds at most) until both escapers run, then prints how many do. */
function countLoop(tag: string): string {
  const count = `pgrep -c -f '^sleep 102[12][.]${tag}'`;
  return `for i in {1..100}; do [ "$(${count})" = 2 ] && break; sleep 0.05; done; ${count}`;
}

function hasSetpriv(): boolean {
  try {
    return new Deno.Command("setpriv", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}
