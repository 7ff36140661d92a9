/** The shell cannot wedge: timeouts, exits and kills recover; closing leaves no process behind. */
import assert from "node:assert/strict";
import {
  eventually,
  harness,
  isRunning,
  pidsByCmdline,
  withHarness,
} from "../../../helpers/bash.ts";
import { tempDir } from "../../../helpers/temp.ts";

Deno.test("bash: a timeout kills the command, returns partial output and keeps the state", async () => {
  await withHarness({}, async (h) => {
    await Deno.mkdir(`${h.workspace}/sub`);
    await h.run("cd sub; export KEEP=kept; keepfn() { echo fn; }");
    const start = performance.now();
    const r = await h.run("echo partial; echo warn >&2; sleep 30", { timeout: 1 });
    const elapsed = performance.now() - start;
    // At least the timeout; well under the 30 s sleep (a generous bound for a loaded machine).
    assert.ok(elapsed >= 1000 && elapsed < 20_000, `took ${elapsed} ms`);
    assert.equal(r.error_code, 124);
    assert.equal(r.output, "partial\n");
    assert.match(r.error!, /^warn\n/);
    assert.match(r.error!, /Command timed out after 1 s and was stopped/);
    assert.match(r.error!, /keeps its state/);
    const next = await h.run('pwd; echo "$KEEP"; keepfn');
    assert.deepEqual(next, {
      output: `${h.workspace}/sub\nkept\nfn\n`,
      error: null,
      error_code: 0,
    });
  });
});

Deno.test("bash: the default timeout comes from the settings", async () => {
  await withHarness({ bashTimeoutSeconds: 0.5 }, async (h) => {
    const r = await h.run("sleep 30");
    assert.equal(r.error_code, 124);
    assert.match(r.error!, /timed out after 0\.5 s/);
    const longer = await h.run("sleep 0.7; echo slept", { timeout: 5 });
    assert.equal(longer.output, "slept\n", "a per-call timeout overrides the default");
  });
});

Deno.test("bash: a timeout stops the rest of the command, like Ctrl-C", async () => {
  await withHarness({}, async (h) => {
    // Found by command line: inside the shell's PID namespace `$!` is not the host's pid.
    const escaped = `sleep 31.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    const r = await h.run(`setsid ${escaped} & sleep 32 | cat; touch ran-on`, { timeout: 1 });
    assert.equal(r.error_code, 124);
    await assert.rejects(() => Deno.stat(`${h.workspace}/ran-on`), Deno.errors.NotFound);
    const loop = await h.run("while :; do :; done; touch ran-on", { timeout: 0.5 });
    assert.equal(loop.error_code, 124);
    assert.match(loop.error!, /shell is still usable/);
    await assert.rejects(() => Deno.stat(`${h.workspace}/ran-on`), Deno.errors.NotFound);
    // A process that left the session's process group is not reached by the interrupt, but it
    // still belongs to the session and dies at close (see the close test).
    const pids = await pidsByCmdline(escaped);
    assert.equal(pids.length, 1, `${escaped} is gone: the interrupt reached it`);
    assert.ok(await isRunning(pids[0]), `${escaped} is a zombie: the interrupt reached it`);
    assert.equal((await h.run("echo alive")).output, "alive\n");
  });
});

Deno.test("bash: a timed-out command that ignores SIGINT is killed", async () => {
  await withHarness({}, async (h) => {
    await h.run("export KEEP=kept");
    const r = await h.run(
      "bash -c 'trap \"\" INT; echo stubborn; sleep 31'; touch ran-on",
      { timeout: 0.5 },
    );
    assert.equal(r.error_code, 124);
    assert.equal(r.output, "stubborn\n");
    assert.match(r.error!, /shell is still usable/);
    await assert.rejects(() => Deno.stat(`${h.workspace}/ran-on`), Deno.errors.NotFound);
    assert.equal((await h.run('echo "$KEEP"')).output, "kept\n");
  });
});

Deno.test("bash: a timeout keeps a shell running with set -e and set -u", async () => {
  await withHarness({}, async (h) => {
    await h.run("set -eu; KEEP=kept");
    const r = await h.run("sleep 30", { timeout: 0.5 });
    assert.equal(r.error_code, 124);
    assert.match(r.error!, /shell is still usable/);
    const next = await h.run('echo "$KEEP $-"');
    assert.match(next.output!, /^kept .*e.*u|^kept .*u.*e/, "options are still set");
    assert.equal(next.error, null);
  });
});

Deno.test("bash: a timeout leaves background jobs of earlier calls alone", async () => {
  await withHarness({}, async (h) => {
    // Python may re-enable SIGINT in a background job; a timeout must not reach it. The job is
    // found by a word in its command line: inside the shell's PID namespace `$!` is not the
    // host's pid.
    const marker = `deft-background-${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    await h.run(
      "python3 -c 'import signal, time, pathlib\n" +
        'signal.signal(signal.SIGINT, lambda *a: pathlib.Path("got-sigint").touch())\n' +
        `pathlib.Path("ready").touch()\ntime.sleep(60)\n' ${marker} >/dev/null 2>&1 &`,
    );
    await h.run("while [ ! -e ready ]; do sleep 0.05; done", { timeout: 30 });
    const pids = await pidsByCmdline(marker);
    assert.equal(pids.length, 1, `the background job ${marker} did not start`);
    const r = await h.run("sleep 30", { timeout: 0.5 });
    assert.equal(r.error_code, 124);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await assert.rejects(() => Deno.stat(`${h.workspace}/got-sigint`), Deno.errors.NotFound);
    assert.deepEqual(await pidsByCmdline(marker), pids, "the background job is gone");
    assert.ok(await isRunning(pids[0]), "the background job is a zombie");
  });
});

Deno.test("bash: timeouts keep the shell even when Deft was started with SIGINT ignored", async () => {
  // As under `deft serve &` in a script: children inherit the ignored SIGINT.
  await using workspaceDir = await tempDir("deft-bash-test-");
  const workspace = workspaceDir.path;
  const script = `${workspace}/probe.ts`;
  const tool = new URL("../../../../src/tools/bash/tool.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    `import { BashTool } from ${JSON.stringify(tool)};
const t = new BashTool({ provider: "x", workspace: ${JSON.stringify(workspace)}, settings: {} });
await t.execute({ command: "export KEEP=kept" });
const r = await t.execute({ command: "sleep 30; touch ran-on", timeout: 0.5 });
const next = await t.execute({ command: 'echo "$KEEP"' });
await t.close();
console.log(JSON.stringify([r.error_code, next.output]));
`,
  );
  const out = await new Deno.Command("bash", {
    args: ["-c", `trap '' INT; exec "${Deno.execPath()}" run -A --no-check "${script}"`],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(out.code, 0);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), [124, "kept\n"]);
  await assert.rejects(() => Deno.stat(`${workspace}/ran-on`), Deno.errors.NotFound);
});

Deno.test("bash: a timeout inside a function restarts the shell in its directory", async () => {
  await withHarness({}, async (h) => {
    await Deno.mkdir(`${h.workspace}/sub`);
    await h.run("cd sub; LOST=1");
    const r = await h.run(
      "spin() { echo spinning; while :; do :; done; }; spin; touch ran-on",
      { timeout: 1 },
    );
    assert.equal(r.error_code, 124);
    assert.equal(r.output, "spinning\n");
    assert.match(r.error!, /timed out after 1 s/);
    assert.match(r.error!, new RegExp(`next call starts a fresh shell in ${h.workspace}/sub`));
    await assert.rejects(() => Deno.stat(`${h.workspace}/sub/ran-on`), Deno.errors.NotFound);
    const next = await h.run('pwd; echo "[${LOST:-}]"');
    assert.equal(next.error_code, 0);
    assert.equal(next.output, `${h.workspace}/sub\n[]\n`);
    assert.match(next.error!, /fresh shell .* because the previous command timed out after 1 s/);
    const after = await h.run("echo quiet");
    assert.equal(after.error, null, "the fresh shell is announced once");
  });
});

Deno.test("bash: `exit` is reported and the next call gets a fresh shell", async () => {
  await withHarness({}, async (h) => {
    await Deno.mkdir(`${h.workspace}/sub`);
    await h.run("cd sub");
    const r = await h.run("echo bye; echo err >&2; exit 3");
    assert.equal(r.error_code, 3);
    assert.equal(r.output, "bye\n");
    assert.match(r.error!, /^err\nThe shell exited with status 3/);
    const next = await h.run("pwd");
    assert.equal(next.error_code, 0);
    assert.equal(next.output, `${h.workspace}/sub\n`);
    assert.match(
      next.error!,
      /fresh shell in .*sub, because the previous shell exited with status 3/,
    );
  });
});

Deno.test("bash: a fresh shell whose directory is gone starts in the workspace", async () => {
  await withHarness({}, async (h) => {
    await Deno.mkdir(`${h.workspace}/gone`);
    await h.run("cd gone");
    const r = await h.run(`rmdir "${h.workspace}/gone" && exit 4`);
    assert.equal(r.error_code, 4);
    const next = await h.run("pwd");
    assert.equal(next.output, `${h.workspace}\n`);
    assert.match(next.error!, /gone no longer exists/);
  });
});

Deno.test("bash: `kill -9 $$` and `set -e` end the shell; the tool recovers", async () => {
  await withHarness({}, async (h) => {
    const killed = await h.run("kill -9 $$");
    assert.equal(killed.error_code, 137);
    assert.match(killed.error!, /The shell was killed by SIGKILL/);
    const next = await h.run("echo back");
    assert.equal(next.output, "back\n");
    assert.match(next.error!, /previous shell was killed by SIGKILL/);

    const errexit = await h.run("set -e; false; echo unreachable");
    assert.equal(errexit.error_code, 1);
    assert.equal(errexit.output, "");
    assert.equal((await h.run("echo again")).output, "again\n");
  });
});

Deno.test("bash: a shell that dies between calls is replaced on the next call", async () => {
  await withHarness({}, async (h) => {
    const r = await h.run("(sleep 0.2; kill -9 $$) >/dev/null 2>&1 &");
    assert.equal(r.error_code, 0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const next = await h.run("echo fine");
    assert.equal(next.output, "fine\n");
    assert.match(next.error!, /fresh shell .* killed by SIGKILL/);
  });
});

Deno.test("bash: close kills every process the session started (checked by pid)", async () => {
  const h = await harness();
  let pids: number[] = [];
  // Found by command line: inside the shell's PID namespace `$!` is not the host's pid.
  const unique = `${Date.now() % 100000}`;
  try {
    const r = await h.run(
      [
        `sleep 1001.${unique} &`,
        `python3 -c 'import time; time.sleep(1000)' .${unique} >/dev/null 2>&1 &`,
        `setsid sleep 1002.${unique} &`,
        `nohup sleep 1003.${unique} >/dev/null 2>&1 &`,
        `( sleep 1004.${unique} & )`, // double fork: reparented away from the shell
        `setsid env -i sleep 1005.${unique} &`, // no session marker in its environment
        "echo started",
      ].join("\n"),
    );
    assert.equal(r.output, "started\n");
    assert.ok(
      await eventually(async () => (pids = await pidsByCmdline(`.${unique}`)).length === 6),
      `6 processes started, found ${pids}`,
    );
    for (const pid of pids) assert.ok(await isRunning(pid), `pid ${pid} started`);
  } finally {
    await h.dispose();
  }
  for (const pid of pids) {
    assert.ok(await eventually(async () => !(await isRunning(pid))), `pid ${pid} killed`);
  }
});

// Close has three kill paths: the shell's PID namespace (bwrap's, else unshare's), its process
// group, and the scan for the session's environment marker. Each is tested alone, with a process
// only that path can reach. Without bwrap and unshare (as on a machine that lacks both) there is no
// namespace:
const NO_NAMESPACE = { bwrapPath: "/nonexistent/bwrap", unsharePath: "/nonexistent/unshare" };

Deno.test("bash: close kills by process group (no PID namespace): a job that cleared its environment dies", async () => {
  const h = await harness(NO_NAMESPACE);
  let pid = 0;
  try {
    // `env -i` drops the session's marker variables, so the environment scan cannot see it; it
    // stays in the shell's process group, which close kills as a whole.
    // Wait until it has exec'd with the empty environment, or the scan could still see the tag.
    const r = await h.run(
      "env -i sleep 1011 >/dev/null 2>&1 & p=$!; for i in {1..500}; do " +
        "[ -z \"$(tr -d '\\0' < /proc/$p/environ)\" ] && break; sleep 0.01; done; echo $p",
    );
    pid = Number(r.output!.trim());
    assert.ok(await isRunning(pid), `pid ${pid} started`);
  } finally {
    await h.dispose();
  }
  assert.ok(await eventually(async () => !(await isRunning(pid))), `untagged pid ${pid} survived`);
});

Deno.test("bash: close kills by environment marker (no PID namespace): a job that left the group dies", async () => {
  const h = await harness(NO_NAMESPACE);
  let pid = 0;
  try {
    // `setsid` moves it out of the shell's process group; it still carries the session's marker.
    // Wait until it leads its own session (field 6 of /proc/PID/stat), or the group kill could
    // still reach it.
    const r = await h.run(
      "setsid sleep 1012 >/dev/null 2>&1 & p=$!; for i in {1..500}; do " +
        'read -r _ _ _ _ _ sid _ < /proc/$p/stat; [ "$sid" = "$p" ] && break; sleep 0.01; done; echo $p',
    );
    pid = Number(r.output!.trim());
    assert.ok(await isRunning(pid), `pid ${pid} started`);
  } finally {
    await h.dispose();
  }
  assert.ok(await eventually(async () => !(await isRunning(pid))), `setsid pid ${pid} survived`);
});

Deno.test("bash: close kills by PID namespace: a job that left the group and cleared its environment dies", async () => {
  const h = await harness();
  // Neither the group kill nor the marker scan can reach this one; only the namespace ending can.
  const sleeper = `sleep 1013.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  try {
    await h.run(`setsid env -i ${sleeper} >/dev/null 2>&1 & echo started`);
    assert.ok(
      await eventually(async () => (await pidsByCmdline(sleeper)).length === 1),
      `${sleeper} started`,
    );
  } finally {
    await h.dispose();
  }
  assert.ok(
    await eventually(async () => (await pidsByCmdline(sleeper)).length === 0),
    `${sleeper} survived: the shell ran without its PID namespace`,
  );
});

Deno.test("bash: close interrupts a running command; later calls are refused", async () => {
  const h = await harness();
  try {
    const running = h.run("echo started; sleep 30");
    const queued = h.run("echo queued");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const start = performance.now();
    await h.tool.close();
    assert.ok(performance.now() - start < 15_000, "close waited for the 30 s command");
    const r = await running;
    assert.equal(r.output, "started\n");
    assert.match(r.error!, /stopped because the bash tool was closed/);
    assert.notEqual(r.error_code, 0);
    const q = await queued;
    assert.match(q.error!, /has been closed/);
    const after = await h.run("echo no");
    assert.match(after.error!, /has been closed/);
  } finally {
    await h.dispose();
  }
});

Deno.test("bash: close removes saved outputs", async () => {
  const h = await harness({ outputLimit: 10 });
  let path = "";
  try {
    const r = await h.run("seq 1 100");
    path = r.output!.match(/saved in (\S+);/)![1];
    assert.ok((await Deno.stat(path)).isFile);
  } finally {
    await h.dispose();
  }
  await assert.rejects(() => Deno.stat(path), Deno.errors.NotFound);
});
