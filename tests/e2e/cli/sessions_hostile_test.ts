/**
 * `deft sessions` shows fields read from files a hostile repository or model may have written
 * (a trajectory, a live session's shell board): none reaches the terminal raw, in the table or in
 * `--json`; and a FIFO where a board should be is skipped at once, and said so.
 */
import assert from "node:assert/strict";
import { boardPath } from "../../../src/agent/shell_board.ts";
import { runDeft } from "../../helpers/deft.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

/** ESC with an OSC title, BEL, a one-byte CSI (C1 0x9b), DEL and a bidi override. */
const NASTY = "\x1b]0;pwned\x07\x9b2J\x7f\u202e";
/** What a terminal would obey (newline aside: it ends each line). */
// deno-lint-ignore no-control-regex
const OBEYED = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/;

async function setup(fields: Record<string, unknown>) {
  const home = await tempDirUntilExit("deft-home-");
  const repo = `${home}/repo`;
  await Deno.mkdir(repo);
  const dir = `${home}/state/deft/trajectories`;
  await Deno.mkdir(dir, { recursive: true });
  const path = `${dir}/trajectory_20260101_000000_abc123.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      format_version: 1,
      session_id: "20260101_000000_abc123",
      task: "the task",
      working_dir: repo,
      start_time: "2026-01-01T00:00:00.000Z",
      end_time: null,
      provider: "openai_compatible",
      model: "m",
      max_steps: 9,
      llm_interactions: [],
      agent_steps: [],
      success: false,
      final_result: null,
      execution_time: 0,
      total_usage: {},
      ...fields,
    }),
  );
  const env = { HOME: home, XDG_STATE_HOME: `${home}/state` };
  return { home, repo, path, env };
}

Deno.test("deft sessions: control bytes in every field read from disk reach the terminal inert", async () => {
  const { home, repo, path, env } = await setup({
    session_id: `20260101_000000_abc123${NASTY}`,
    start_time: `2026-01${NASTY}`,
    task: `fix it${NASTY}`,
    checkpoints: [],
  });
  // A live session's board (this test holds its lock), every field hostile.
  const board = await Deno.open(boardPath(path), { create: true, write: true, read: true });
  await board.write(new TextEncoder().encode(JSON.stringify({
    deft_shells: 1,
    session_id: "s",
    shells: [{
      id: "bg-1",
      status: `running${NASTY}`,
      started: `${NASTY}1`,
      command: `ls${NASTY}`,
    }],
  })));
  await board.lock(true);
  try {
    const table = await runDeft(["sessions", "-w", repo], { cwd: home, env });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /fix it/);
    assert.match(table.stdout, /background shell bg-1/, "the live board is shown");
    for (const [name, text] of [["stdout", table.stdout], ["stderr", table.stderr]]) {
      const bad = OBEYED.exec(text);
      assert.equal(bad, null, `${name} holds U+${bad?.[0].charCodeAt(0).toString(16)}: ${text}`);
    }

    const json = await runDeft(["sessions", "-w", repo, "--json"], { cwd: home, env });
    assert.equal(json.code, 0, json.stderr);
    const bad = OBEYED.exec(json.stdout);
    assert.equal(bad, null, `--json holds U+${bad?.[0].charCodeAt(0).toString(16)}`);
    // The same strings for a JSON reader: escaped, not changed.
    const [listed] = JSON.parse(json.stdout);
    assert.equal(listed.started, `2026-01${NASTY}`);
    assert.equal(listed.task, `fix it${NASTY}`);
  } finally {
    board.close();
  }
});

Deno.test("deft sessions: a FIFO where a session's shell board should be is skipped at once, and said so", async () => {
  const { home, repo, path, env } = await setup({});
  const fifo = boardPath(path);
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success, "mkfifo");
  // A deadline: a Deft blocked on the FIFO is released by a writer after 20 s.
  let released = false;
  const release = setTimeout(() => {
    released = true;
    Deno.open(fifo, { write: true }).then((f) => f.close(), () => {});
  }, 20_000);
  const r = await runDeft(["sessions", "-w", repo], { cwd: home, env });
  clearTimeout(release);
  assert.ok(!released, "deft sessions waited on the FIFO");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /the task/, "the session is still listed");
  assert.match(
    r.stderr,
    /skipped the background shells of 20260101_000000_abc123: .*FIFO/,
    r.stderr,
  );
  assert.ok((await Deno.lstat(fifo)).isFifo, "the FIFO is left alone");
});
