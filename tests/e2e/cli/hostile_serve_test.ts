/**
 * `deft serve` fed hostile calls: each is answered with an error in bounded time, and the server
 * answers the next call at once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { ServerProcess } from "../../helpers/server_process.ts";
import { eventually, pidsByCmdline } from "../../helpers/bash.ts";
import { tempDir } from "../../helpers/temp.ts";

// Swaps `target.txt` for a FIFO and back, as fast as it can, until killed.
const FIFO_SWAPPER = `
import os, sys
os.chdir(sys.argv[1])
while True:
    os.mkfifo("p.tmp")
    os.rename("p.tmp", "target.txt")
    with open("f.tmp", "w") as f:
        f.write("hi\\n")
    os.rename("f.tmp", "target.txt")
`;

async function bashAnswers(server: ServerProcess, id: string): Promise<void> {
  const started = Date.now();
  await server.sendJson({ id, name: "bash", arguments: { command: `echo alive-${id}` } });
  const reply = await server.next(30_000);
  assert.equal(reply.id, id);
  assert.equal(reply.success, true, String(reply.error));
  assert.match(String(reply.output), new RegExp(`alive-${id}`));
  assert.ok(Date.now() - started < 30_000);
}

function nested(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

Deno.test("a value nested 5,000 or 100,000 deep gets an error; the server goes on", async () => {
  const dirTemp = await tempDir();
  const dir = dirTemp.path;
  const file = join(dir, "a.json");
  await Deno.writeTextFile(file, '{"a": 1}\n');
  const server = new ServerProcess(["serve", "-w", dir]);
  try {
    await bashAnswers(server, "first");
    for (const depth of [5_000, 100_000]) {
      // Written by hand: JSON.stringify of the parsed value would itself be the thing under test.
      await server.send(
        `{"id": ${depth}, "name": "json_edit_tool", "arguments": {"operation": "set", ` +
          `"file_path": ${JSON.stringify(file)}, "json_path": "$.a", "value": ${nested(depth)}}}`,
      );
      const reply = await server.next(30_000);
      assert.equal(reply.id, depth);
      assert.equal(reply.success, false);
      assert.match(String(reply.error), /nest more than 512 levels/);
      await bashAnswers(server, `after-${depth}`);
    }
    // 500 levels is within the limit and reaches the tool.
    await server.send(
      `{"id": "ok", "name": "json_edit_tool", "arguments": {"operation": "set", ` +
        `"file_path": ${JSON.stringify(file)}, "json_path": "$.a", "value": ${nested(500)}}}`,
    );
    const ok = await server.next(30_000);
    assert.equal(ok.success, true, String(ok.error));
    assert.equal(await server.end(), 0);
  } finally {
    await dirTemp.remove();
  }
});

Deno.test("abusive JSONPath filters are refused at once; bash still answers", async () => {
  const dirTemp = await tempDir();
  const dir = dirTemp.path;
  const file = join(dir, "a.json");
  await Deno.writeTextFile(file, JSON.stringify(["a".repeat(40) + "!", "b"]) + "\n");
  const server = new ServerProcess(["serve", "-w", dir, "--deadline", "json_edit_tool=20"]);
  try {
    const filters = [
      "$[?(@.match(/^(a|a)+$/))]",
      "$[?(@.padEnd(300000000))]",
      "$[?(@.repeat(1e9).length > 1)]",
      "$[?(@.constructor.constructor('return 1')())]",
    ];
    for (const [i, json_path] of filters.entries()) {
      const started = Date.now();
      await server.sendJson({
        id: i,
        name: "json_edit_tool",
        arguments: { operation: "view", file_path: file, json_path },
      });
      const reply = await server.next(30_000);
      assert.equal(reply.success, false, json_path);
      assert.match(String(reply.error), /not allowed in a filter/);
      assert.ok(Date.now() - started < 10_000, `${json_path} took ${Date.now() - started} ms`);
      await bashAnswers(server, `after-${i}`);
    }
    // Ordinary filters still work.
    await server.sendJson({
      id: "plain",
      name: "json_edit_tool",
      arguments: {
        operation: "view",
        file_path: file,
        json_path: "$[?(@ == 'b' || @.length * 2 > 80 && @.startsWith('a'))]",
      },
    });
    const plain = await server.next(30_000);
    assert.equal(plain.success, true, String(plain.error));
    assert.match(String(plain.output), /"b"/);
    assert.equal(await server.end(), 0);
  } finally {
    await dirTemp.remove();
  }
});

Deno.test("a file swapped for a FIFO: no view call hangs past its deadline", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const target = join(dir, "target.txt");
  await Deno.writeTextFile(target, "hello\n");
  // Swaps the file for a FIFO and back, as fast as it can, until killed.
  const swap = `
import os, sys
os.chdir(sys.argv[1])
while True:
    os.mkfifo("p.tmp")
    os.rename("p.tmp", "target.txt")
    with open("f.tmp", "w") as f:
        f.write("hi\\n")
    os.rename("f.tmp", "target.txt")
`;
  const swapper = new Deno.Command("/usr/bin/python3", {
    args: ["-c", swap, dir],
    stdout: "null",
    stderr: "null",
  }).spawn();
  // Without a sandbox the editor and the shell share one tool host, so the editor's deadline
  // restarts the shell too; that restart must end the shell's jobs.
  const server = new ServerProcess([
    "serve",
    "-w",
    dir,
    "--sandbox",
    "none",
    "--deadline",
    "str_replace_based_edit_tool=3",
  ]);
  try {
    // A background job of the shell: stopping the tool host must not leave it behind. Found by its
    // command line: `$!` is a pid in the shell's own PID namespace.
    const job = `sleep 600.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    await server.sendJson({
      id: "job",
      name: "bash",
      arguments: { command: `${job} & echo started` },
    });
    assert.equal(String((await server.next(30_000)).output).trim(), "started");
    assert.ok(
      await eventually(async () => (await pidsByCmdline(job)).length === 1),
      `${job} started`,
    );
    let stopped = 0;
    for (let i = 0; i < 1000; i++) {
      const started = Date.now();
      await server.sendJson({
        id: i,
        name: "str_replace_based_edit_tool",
        arguments: { command: "view", path: target },
      });
      const reply = await server.next(20_000);
      const took = Date.now() - started;
      assert.equal(reply.id, i);
      assert.ok(took < 15_000, `call ${i} took ${took} ms`);
      if (/deadline of 3 s/.test(String(reply.error))) stopped++;
      if (stopped >= 1) break;
    }
    swapper.kill("SIGKILL");
    await swapper.status;
    // The editor refuses a FIFO before opening it, and opens without waiting, so a swap between
    // that check and the open no longer blocks at all. Should a call still run past its
    // deadline, the restart must have killed the old shell's process group, job included.
    if (stopped >= 1) {
      assert.ok(
        await eventually(async () => (await pidsByCmdline(job)).length === 0),
        `the shell's background job ${job} outlived the restart`,
      );
    }
    await bashAnswers(server, "after-swaps");
    assert.equal(await server.end(20_000), 0);
    assert.ok(
      await eventually(async () => (await pidsByCmdline(job)).length === 0),
      `${job} outlived deft serve`,
    );
  } finally {
    try {
      swapper.kill("SIGKILL");
    } catch { /* already ended */ }
    await swapper.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve refuses object and array ids with an error line", async () => {
  const input = [
    '{"id": {"a": 1}, "name": "task_done"}',
    '{"id": [1], "name": "task_done"}',
    '{"id": 3, "name": "task_done"}',
  ].join("\n") + "\n";
  const run = await runDeft(["serve"], { stdin: input });
  assert.equal(run.code, 0, run.stderr);
  const out = run.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(out.map((o) => [o.id, o.success]), [[null, false], [null, false], [3, true]]);
  assert.match(out[0].error, /object or array "id"/);
});

/** Reads replies until every id in `ids` has one; returns them by id, with when each came. */
async function repliesFor(
  server: ServerProcess,
  ids: string[],
  sent: number,
  limitMs: number,
): Promise<Map<string, { reply: Record<string, unknown>; ms: number }>> {
  const got = new Map<string, { reply: Record<string, unknown>; ms: number }>();
  while (got.size < ids.length) {
    const reply = await server.next(limitMs);
    got.set(String(reply.id), { reply, ms: Date.now() - sent });
  }
  assert.deepEqual([...got.keys()].sort(), [...ids].sort());
  return got;
}

Deno.test("serve --parallel: a slow call and a file swapped for a FIFO never hold back the other calls", async () => {
  await using dir = await tempDir("deft-fifo-parallel-");
  const target = join(dir.path, "target.txt");
  const other = join(dir.path, "other.txt");
  await Deno.writeTextFile(target, "hello\n");
  await Deno.writeTextFile(other, "other file\n");
  const swapper = new Deno.Command("/usr/bin/python3", {
    args: ["-c", FIFO_SWAPPER, dir.path],
    stdout: "null",
    stderr: "null",
  }).spawn();
  // Without a sandbox the editors and the shell share one worker: a call that held the worker's
  // thread (an open waiting on a FIFO) would hold the shell's answers too.
  const server = new ServerProcess(["serve", "--parallel", "-w", dir.path, "--sandbox", "none"]);
  try {
    // A call that takes a while: the calls sent after it are answered before it.
    let sent = Date.now();
    await server.sendJson({
      id: "slow",
      name: "bash",
      arguments: { command: "sleep 6; echo slept" },
    });
    await server.sendJson({ id: "done", name: "task_done", arguments: {} });
    await server.sendJson({
      id: "view",
      name: "str_replace_based_edit_tool",
      arguments: { command: "view", path: other },
    });
    const first = await repliesFor(server, ["slow", "done", "view"], sent, 30_000);
    assert.ok(first.get("done")!.ms < 4_000, `task_done waited ${first.get("done")!.ms} ms`);
    // The view needs the worker, which the bash call may still be starting: it must come before
    // the slow call's answer, whatever the load.
    assert.ok(
      first.get("view")!.ms < first.get("slow")!.ms,
      `the view (${first.get("view")!.ms} ms) waited for the slow call (${
        first.get("slow")!.ms
      } ms)`,
    );
    assert.match(String(first.get("view")!.reply.output), /other file/);
    assert.equal(first.get("slow")!.reply.output, "slept\n");
    // Views of the raced file beside a task_done, a bash echo and a view of another file, round
    // after round: every one is answered within seconds (never the 30 s deadline), the raced
    // view with its content or an error naming the problem.
    let refused = 0;
    for (let round = 0; round < 300; round++) {
      sent = Date.now();
      await server.sendJson({
        id: `t${round}`,
        name: "str_replace_based_edit_tool",
        arguments: { command: "view", path: target },
      });
      await server.sendJson({ id: `d${round}`, name: "task_done", arguments: {} });
      await server.sendJson({
        id: `b${round}`,
        name: "bash",
        arguments: { command: "echo alive" },
      });
      await server.sendJson({
        id: `o${round}`,
        name: "str_replace_based_edit_tool",
        arguments: { command: "view", path: other },
      });
      const got = await repliesFor(
        server,
        ["t", "d", "b", "o"].map((p) => p + round),
        sent,
        20_000,
      );
      for (const [id, { reply, ms }] of got) {
        assert.ok(ms < 10_000, `round ${round}: ${id} took ${ms} ms: ${JSON.stringify(reply)}`);
        if (id.startsWith("t") && !reply.success) {
          refused++;
          assert.match(
            String(reply.error),
            /changed while the editor was using it|not a regular file|does not exist/,
          );
        } else {
          assert.equal(reply.success, true, `${id}: ${reply.error}`);
        }
      }
      assert.match(String(got.get(`b${round}`)!.reply.output), /alive/);
      assert.match(String(got.get(`o${round}`)!.reply.output), /other file/);
    }
    swapper.kill("SIGKILL");
    await swapper.status;
    assert.ok(refused > 0, "the race reached the editor at least once");
    assert.equal(await server.end(20_000), 0);
  } finally {
    try {
      swapper.kill("SIGKILL");
    } catch { /* already ended */ }
    await swapper.status;
  }
});
