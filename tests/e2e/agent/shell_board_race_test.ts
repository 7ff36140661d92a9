/**
 * `deft sessions` reads a live session's shell board (src/agent/shell_board.ts) while a hostile
 * process swaps a FIFO in for it between Deft's look and its open: the read must never wait.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { boardPath, readShellBoard } from "../../../src/agent/shell_board.ts";
import { tempDir } from "../../helpers/temp.ts";

function board(shells: unknown[]): string {
  return JSON.stringify({ deft_shells: 1, session_id: "s", shells });
}

/**
 * Swaps the board at `path` for a fresh full board file and then a FIFO, again and again, as a
 * hostile process racing `deft sessions` would; each FIFO stays reachable under `keep` so that a
 * reader stuck on one can be let go.
 */
const RACER = `
import os, sys
board, keep, text = sys.argv[1], sys.argv[2], sys.argv[3]
i = 0
while True:
    i += 1
    regular = f"{keep}/r{i}"
    with open(regular, "w") as f:
        f.write(text)
    os.rename(regular, board)
    fifo = f"{keep}/f{i}"
    os.mkfifo(fifo)
    os.link(fifo, f"{keep}/l{i}")
    os.rename(f"{keep}/l{i}", board)
`;

/** Opens every FIFO in `keep` for writing without waiting: a reader blocked on one goes on. */
const RELEASE = `
import os, sys
for name in os.listdir(sys.argv[1]):
    try:
        os.close(os.open(os.path.join(sys.argv[1], name), os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
`;

Deno.test("shell board: a FIFO swapped in while the board is read never makes the read wait", async () => {
  await using dir = await tempDir("deft-board-");
  const trajectory = join(dir.path, "trajectory_x.json");
  const keep = join(dir.path, "keep");
  await Deno.mkdir(keep);
  const text = board([{ id: "bg-1", status: "running", started: "01:02:03", command: "x" }]);
  const racer = new Deno.Command("python3", {
    args: ["-c", RACER, boardPath(trajectory), keep, text],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let stuck: Promise<unknown> | undefined;
  // Reads that met a FIFO: at the first look, or swapped in after it (the race this is about).
  let fifos = 0;
  let swapped = 0;
  let reads = 0;
  const noted = (why: string) => /changed while Deft looked/.test(why) ? swapped++ : fifos++;
  try {
    while (!await Deno.lstat(boardPath(trajectory)).then(() => true, () => false)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const end = Date.now() + 4000;
    for (; Date.now() < end && swapped < 25 && !stuck; reads++) {
      const read = readShellBoard(trajectory, noted);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise((resolve) => timer = setTimeout(() => resolve("late"), 5000));
      if (await Promise.race([read, late]) === "late") stuck = read;
      clearTimeout(timer);
    }
  } finally {
    racer.kill("SIGKILL");
    await racer.status;
    if (stuck) {
      await new Deno.Command("python3", { args: ["-c", RELEASE, keep] }).output();
      await stuck;
    }
  }
  assert.equal(stuck, undefined, "a read waited on a FIFO swapped in for the board");
  console.log(`${reads} reads: ${fifos} met a FIFO at once, ${swapped} had it swapped in later`);
});
