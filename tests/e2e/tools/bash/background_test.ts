/**
 * Background shells (`run_in_background`, `bash_output`, `kill_shell`) with real bash, real
 * bubblewrap and a real HTTP server: sandbox off (a PID namespace), on (workspace-write, no
 * network: the server sits on the sandbox's private loopback, which the foreground shell shares),
 * and with neither bwrap nor unshare (nothing but Deft's own kill to end them).
 */
import assert from "node:assert/strict";
import type { Tool, ToolExecResult, ToolSettings } from "../../../../src/tools/base.ts";
import { createTools } from "../../../../src/tools/registry.ts";
import { eventually, pidsByCmdline } from "../../../helpers/bash.ts";
import { tempDir } from "../../../helpers/temp.ts";

const MODES: Record<string, ToolSettings> = {
  "sandbox off": {},
  "sandbox on": { sandbox: "workspace-write" },
  "no namespace": { bwrapPath: "/nonexistent/bwrap", unsharePath: "/nonexistent/unshare" },
};

interface Tools {
  workspace: string;
  bash(command: string, extra?: Record<string, unknown>): Promise<ToolExecResult>;
  start(command: string): Promise<string>;
  output(shellId: string, filter?: string): Promise<ToolExecResult>;
  kill(shellId: string): Promise<ToolExecResult>;
  close(): Promise<void>;
}

async function withTools(settings: ToolSettings, body: (t: Tools) => Promise<void>) {
  await using temp = await tempDir("deft-bg-test-");
  const workspace = temp.path;
  const [bash, output, kill] = createTools(
    { provider: "openai", workspace, settings },
    ["bash", "bash_output", "kill_shell"],
  );
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const tool of [bash, output, kill] as Tool[]) await tool.close();
  };
  const tools: Tools = {
    workspace,
    bash: (command, extra = {}) => bash.execute({ command, ...extra }),
    async start(command) {
      const r = await bash.execute({ command, run_in_background: true });
      assert.equal(r.error_code, 0, String(r.error));
      const id = /^shell_id: (bg-[0-9a-f]+)$/m.exec(r.output ?? "")?.[1];
      assert.ok(id, `no shell_id in ${r.output}`);
      return id;
    },
    output: (shellId, filter) =>
      output.execute(filter ? { shell_id: shellId, filter } : { shell_id: shellId }),
    kill: (shellId) => kill.execute({ shell_id: shellId }),
    close,
  };
  try {
    await body(tools);
  } finally {
    await close();
  }
}

/** The new output of a `bash_output` result (after its header lines). */
function newOutput(r: ToolExecResult): string {
  const text = r.output ?? "";
  const at = text.indexOf("output:\n");
  if (at < 0) return text.includes("(no new output") ? "" : `<unexpected: ${text}>`;
  return text.slice(at + "output:\n".length);
}

/** Whether the listing (`shell_id: "*"`, which reads nothing) shows `id` running. */
async function running(t: Tools, id: string): Promise<boolean> {
  const list = (await t.output("*")).output!;
  const line = list.split("\n").find((l) => l.startsWith(`${id} `));
  assert.ok(line, `${id} is not listed:\n${list}`);
  return /^\S+ {2}running /.test(line);
}

/** Reads until `pattern` shows up in the accumulated new output; returns all of it. */
async function readUntil(t: Tools, id: string, pattern: RegExp): Promise<string> {
  let seen = "";
  const ok = await eventually(async () => {
    const r = await t.output(id);
    assert.equal(r.error_code, 0, String(r.error));
    seen += newOutput(r);
    return pattern.test(seen);
  }, 20_000);
  assert.ok(ok, `never saw ${pattern} in ${JSON.stringify(seen)}`);
  return seen;
}

/** Whether something listens on `port`, asked from the session's shell (its network namespace). */
async function listensInShell(t: Tools, port: number): Promise<boolean> {
  const r = await t.bash(
    `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo open || echo closed`,
  );
  return r.output === "open\n";
}

async function listensOnHost(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch {
    return false;
  }
}

/** A GET from the session's shell (the server may be on the sandbox's own loopback). */
async function get(t: Tools, port: number, path: string): Promise<void> {
  const r = await t.bash(
    `python3 -c 'import sys, urllib.request as u; u.urlopen(sys.argv[1]).read()' ` +
      `http://127.0.0.1:${port}${path}`,
  );
  assert.equal(r.error_code, 0, String(r.error));
}

function unique(): string {
  return String(crypto.getRandomValues(new Uint32Array(1))[0]);
}

/**
 * A background HTTP server: started, read twice (only what is new each time), read through a
 * filter, killed with the processes it started, then asked about again.
 */
async function serverScenario(mode: string, t: Tools, u: string): Promise<void> {
  // The needles: its own files in the workspace, on every command line the job starts. A
  // setsid'd child keeps the job's variable; one with a cleared environment stays in the
  // job's process group.
  const dir = `${t.workspace}/site`;
  await Deno.mkdir(dir);
  for (const page of ["first", "second", "skipped", "third"]) {
    await Deno.writeTextFile(`${dir}/${page}`, `${page}\n`);
  }
  const id = await t.start(
    `setsid sleep 900.${u} & env -i sleep 901.${u} & ` +
      `exec python3 -u -m http.server 0 --bind 127.0.0.1 --directory ${dir}`,
  );
  const first = await readUntil(t, id, /Serving HTTP on 127\.0\.0\.1 port \d+/);
  const port = Number(/port (\d+)/.exec(first)![1]);
  assert.ok(await listensInShell(t, port), "the foreground shell reaches the server");
  if (mode !== "sandbox on") assert.ok(await listensOnHost(port));
  assert.equal((await pidsByCmdline(dir)).length, 1, "python runs");
  assert.equal((await pidsByCmdline(`.${u}`)).length, 2, "both sleeps run");

  await get(t, port, "/first");
  const second = await readUntil(t, id, /GET \/first/);
  assert.doesNotMatch(second, /Serving HTTP/, "the first read's output is not repeated");
  await get(t, port, "/second");
  await get(t, port, "/skipped");
  await get(t, port, "/third");
  // The server logs each request once it has answered it: wait for the last one.
  let filtered = "";
  assert.ok(
    await eventually(async () => {
      const r = await t.output(id, "GET /(second|third)");
      filtered += newOutput(r);
      return /third/.test(filtered);
    }, 20_000),
    filtered,
  );
  assert.match(filtered, /GET \/second/);
  assert.doesNotMatch(filtered, /skipped|first/, "only the new lines the filter matches");
  const after = await t.output(id);
  assert.match(after.output!, /^status: running$/m);
  assert.equal(newOutput(after), "", "the filtered read consumed the lines it left out");

  const killed = await t.kill(id);
  assert.equal(killed.error_code, 0, String(killed.error));
  assert.match(killed.output!, /Killed background shell/);
  assert.ok(
    await eventually(async () => (await pidsByCmdline(dir)).length === 0),
    "no process left",
  );
  assert.deepEqual(await pidsByCmdline(`.${u}`), [], "the setsid and env -i children went too");
  // A killed process leaves /proc's command lines a moment before it closes its sockets.
  assert.ok(await eventually(async () => !(await listensInShell(t, port))), "the port is free");
  if (mode !== "sandbox on") {
    assert.ok(await eventually(async () => !(await listensOnHost(port))), "free on the host");
  }
  // The shell itself lives on.
  assert.equal((await t.bash("echo still")).output, "still\n");

  // A killed id: a clear error, from both tools.
  const read = await t.output(id);
  assert.notEqual(read.error_code, 0);
  assert.match(read.error!, /was killed: it was stopped with kill_shell/);
  const again = await t.kill(id);
  assert.notEqual(again.error_code, 0);
  assert.match(again.error!, /was killed already/);
}

/** SIGKILL to the processes whose command line holds `needle` (this test's own). */
async function killAll(needle: string): Promise<void> {
  for (const pid of await pidsByCmdline(needle)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

for (const [mode, settings] of Object.entries(MODES)) {
  Deno.test(`background (${mode}): an HTTP server started, polled for new output only, filtered, killed with all it started`, async () => {
    const u = unique();
    try {
      await withTools(settings, (t) => serverScenario(mode, t, u));
    } finally {
      // Without a namespace, what escaped a failed kill would outlive the test.
      await killAll(`.${u}`);
    }
  });

  Deno.test(`background (${mode}): alive when the session closes, gone after (process group and port)`, async () => {
    let dir = "";
    let port = 0;
    const u = unique();
    try {
      await withTools(settings, async (t) => {
        dir = `${t.workspace}/site`;
        await Deno.mkdir(dir);
        const id = await t.start(
          `setsid bash -c 'sleep 902; :' ${dir} & env -i sleep 906.${u} & ` +
            `exec python3 -u -m http.server 0 --bind 127.0.0.1 --directory ${dir}`,
        );
        port = Number(/port (\d+)/.exec(await readUntil(t, id, /port \d+/))![1]);
        assert.equal((await pidsByCmdline(dir)).length, 2);
        assert.equal((await pidsByCmdline(`.${u}`)).length, 1);
        await t.close();
        const read = await t.output(id);
        assert.match(read.error!, /was killed: the shell it ran in ended/);
      });
      assert.ok(
        await eventually(async () => (await pidsByCmdline(dir)).length === 0),
        "no process left",
      );
      assert.deepEqual(await pidsByCmdline(`.${u}`), [], "its env -i child went too");
      if (mode !== "sandbox on") {
        assert.ok(await eventually(async () => !(await listensOnHost(port))), "port free");
      }
    } finally {
      await killAll(`.${u}`);
    }
  });
}

Deno.test("background: a later command's timeout interrupts the shell, not the background shells", async () => {
  await withTools({}, async (t) => {
    // A loop of builtins: it runs in the job's own subshells, which never exec.
    const id = await t.start("while :; do echo tick; read -t 0.2 -u 3 || :; done 3<> <(:)");
    await readUntil(t, id, /tick/);
    const slow = await t.bash("sleep 5", { timeout: 0.5 });
    assert.equal(slow.error_code, 124);
    await t.output(id);
    await readUntil(t, id, /tick/);
    assert.match((await t.output(id)).output!, /^status: running$/m);
  });
});

Deno.test("background: exit codes; a restart of the shell kills what runs; the limit of 16 is said", async () => {
  await withTools({}, async (t) => {
    await t.bash('cd /; greet() { echo "hi from $PWD"; }');
    const done = await t.start("greet; exit 7");
    assert.ok(
      await eventually(async () => /exited/.test((await t.output(done)).output ?? "") || false),
    );
    const ended = await t.output(done);
    assert.match(ended.output!, /^status: exited \(exit code 7\)$/m);
    const again = await t.start("greet; false");
    let seen = "";
    assert.ok(
      await eventually(async () => {
        const r = await t.output(again);
        seen += newOutput(r);
        return /exit code 1/.test(r.output!);
      }),
    );
    assert.equal(seen, "hi from /\n", "the shell's function and directory");

    const needle = `sleep 903.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    const ids = [];
    for (let i = 0; i < 16; i++) ids.push(await t.start(needle));
    const over = await t.bash(needle, { run_in_background: true });
    assert.notEqual(over.error_code, 0);
    assert.match(over.error!, /16 background shells are running already/);
    for (const id of ids) assert.ok(await running(t, id), "listed as running");
    assert.ok(await eventually(async () => (await pidsByCmdline(needle)).length === 16));

    assert.equal((await t.bash("", { restart: true })).error_code, 0);
    assert.ok(await eventually(async () => (await pidsByCmdline(needle)).length === 0));
    const gone = await t.output(ids[0]);
    assert.match(gone.error!, /was killed: the shell it ran in ended/);
    await t.start("true");
  });
});

Deno.test("background: an id from another session, a missing one and a bad filter get clear errors", async () => {
  await withTools({}, async (a) => {
    await withTools({}, async (b) => {
      const id = await a.start("echo from a");
      const other = await b.output(id);
      assert.notEqual(other.error_code, 0);
      assert.match(other.error!, /No background shell with id 'bg-[0-9a-f]+' in this session/);
      assert.match((await b.kill(id)).error!, /No background shell with id/);
      const missing = await a.output("");
      assert.match(missing.error!, /Missing `shell_id`/);
      await readUntil(a, id, /from a/);
      const bad = await a.output(id, "(unclosed");
      assert.notEqual(bad.error_code, 0);
      assert.match(bad.error!, /Invalid `filter` "\(unclosed": .*regular expression/);
    });
  });
});

Deno.test("background: the shell's own jobs, `wait` and job notices do not see background shells", async () => {
  await withTools({}, async (t) => {
    await t.start("sleep 0.1");
    const killed = await t.start("sleep 30");
    const running = await t.start("sleep 30");
    assert.equal((await t.kill(killed)).error_code, 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // A bare `wait` waits for this command's own jobs only; `jobs` lists none of ours; and no
    // "Done" or "Killed" notice lands in this command's output.
    const r = await t.bash("sleep 0.1 & wait; jobs; echo waited", { timeout: 10 });
    assert.deepEqual(r, { output: "waited\n", error: null, error_code: 0 });
    assert.match((await t.output(running)).output!, /^status: running$/m);
  });
});
