/**
 * The board a live session publishes its background shells on (src/agent/shell_board.ts), read
 * as `deft sessions` reads it: only while the session that wrote it holds its lock, and never
 * trusted — a board left by a dead session, a link to a device, or hostile values show nothing
 * raw.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { boardPath, parseShellList, readShellBoard } from "../../src/agent/shell_board.ts";
import { listShells } from "../../src/tools/bash/background_tools.ts";
import type { BackgroundJob } from "../../src/tools/bash/background.ts";
import { tempDir } from "../helpers/temp.ts";

function board(shells: unknown[]): string {
  return JSON.stringify({ deft_shells: 1, session_id: "s", shells });
}

Deno.test("shell board: the tool's list is read back as the shells it lists", () => {
  const job = (id: string, state: string, exitCode: number | null, command: string) =>
    ({
      id,
      state,
      exitCode,
      command,
      unreadBytes: 12,
      startedAt: new Date("2026-01-02T03:04:05Z"),
    }) as unknown as BackgroundJob;
  const text = listShells([
    job("bg-aaa", "running", null, "npm run dev"),
    job("bg-bbb", "exited", 3, "make test\nsecond line"),
    job("bg-ccc", "killed", null, "tail -f log"),
  ]);
  assert.deepEqual(parseShellList(text), [
    { id: "bg-aaa", status: "running", started: "03:04:05", command: "npm run dev" },
    { id: "bg-bbb", status: "exited (exit code 3)", started: "03:04:05", command: "make test…" },
    { id: "bg-ccc", status: "killed", started: "03:04:05", command: "tail -f log" },
  ]);
  assert.deepEqual(parseShellList("No background shells in this session."), []);
});

Deno.test("shell board: shown only while its writer holds the lock; values made safe", async () => {
  await using dir = await tempDir("deft-board-");
  const trajectory = join(dir.path, "trajectory_x.json");
  const path = boardPath(trajectory);
  const secret = `sk-${"Zq9".repeat(8)}`;
  await Deno.writeTextFile(
    path,
    board([
      {
        id: "bg-1",
        status: "running\x1b[2J",
        started: "01:02:03",
        command: `run ${secret}\x1b]0;t\x07`,
      },
      { id: "../../etc\x1b", status: "running", started: "x", command: "bad id" },
    ]),
  );
  // Nobody holds the lock: the session that wrote it is gone.
  assert.deepEqual(await readShellBoard(trajectory), []);

  const writer = await Deno.open(path, { read: true, write: true });
  await writer.lock(true);
  try {
    const shells = await readShellBoard(trajectory);
    assert.equal(shells.length, 1, "the entry with a hostile id is left out");
    assert.equal(shells[0].id, "bg-1");
    assert.ok(!JSON.stringify(shells).includes("\\u001b"), JSON.stringify(shells));
    assert.ok(!shells[0].command.includes(secret), shells[0].command);
  } finally {
    writer.close();
  }
});

Deno.test("shell board: a link to a device or garbage where the board should be shows nothing, at once", async () => {
  await using dir = await tempDir("deft-board-");
  const linked = join(dir.path, "b.json");
  await Deno.symlink("/dev/zero", boardPath(linked));
  assert.deepEqual(await readShellBoard(linked), []);
  const garbage = join(dir.path, "c.json");
  await Deno.writeTextFile(boardPath(garbage), "not json");
  assert.deepEqual(await readShellBoard(garbage), []);
});
