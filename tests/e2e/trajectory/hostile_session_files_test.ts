/**
 * Attacks on the commands that take a session by its trajectory file (`deft sessions rm FILE`,
 * `deft resume FILE`, `deft checkpoints FILE`): a hostile repository ships a FIFO named like a
 * trajectory. Deft must refuse it at once, never block opening it.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

Deno.test("sessions rm / checkpoints / rewind of a trajectory path that is a FIFO refuse it at once, never hang", async () => {
  const home = await tempDirUntilExit("deft-home-");
  const repo = await tempDirUntilExit("deft-repo-");
  const fifo = `${repo}/trajectory_trap.json`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success, "mkfifo");
  const env = { HOME: home, XDG_STATE_HOME: `${home}/state` };
  for (
    const args of [
      ["sessions", "rm", fifo, "-w", repo],
      ["checkpoints", fifo, "-w", repo],
      ["rewind", fifo, "--to", "1", "-w", repo],
    ]
  ) {
    const started = performance.now();
    // A deadline: a Deft blocked on the FIFO is released by a writer after 20 s.
    let released = false;
    const release = setTimeout(() => {
      released = true;
      Deno.open(fifo, { write: true }).then((f) => f.close(), () => {});
    }, 20_000);
    const r = await runDeft(args, { cwd: home, env });
    clearTimeout(release);
    const seconds = (performance.now() - started) / 1000;
    assert.ok(!released, `deft ${args[0]} blocked on the FIFO (${seconds.toFixed(1)} s)`);
    assert.notEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /not a regular file/, r.stderr);
    assert.ok((await Deno.lstat(fifo)).isFifo, "the FIFO is left alone");
  }
});
