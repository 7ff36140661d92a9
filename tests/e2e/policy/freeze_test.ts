/**
 * Freezing Deft's sandboxes (src/policy/freeze.ts), with this test process standing for Deft and
 * bubblewrap sandboxes of its own: a racer forking as fast as it can is held still (its counter
 * does not move) and runs again after; a process continued from outside during the freeze is
 * seen on release; a racer that kills every other process in its sandbox (the helper placed
 * there included) never leaves a freeze claimed that did not hold, nor anything stopped; a
 * process the model stopped itself before the freeze is still stopped after it.
 */
import assert from "node:assert/strict";
import { FreezeRefused, freezeSandboxes } from "../../../src/policy/freeze.ts";
import { fileSize, pause, racerSandbox, stopSandbox } from "../../helpers/sandbox_racer.ts";
import { tempDir } from "../../helpers/temp.ts";

const sandbox = (dir: string, script: string) => racerSandbox(dir, script, { newSession: true });
const stop = stopSandbox;
const count = fileSize;

Deno.test("freeze: a forking racer is held still, then runs again", async () => {
  await using dir = await tempDir("deft-freeze-");
  const tick = `${dir.path}/ticks`;
  // Each tick is a new process (a subshell), and two loops run at once.
  const loop = `while :; do (printf x >> ${tick}); done`;
  const child = sandbox(dir.path, `(${loop}) & (${loop}) & wait`);
  try {
    while (await count(tick) < 10) await pause(20);
    for (let round = 0; round < 5; round++) {
      const freeze = await freezeSandboxes(20);
      assert.ok(freeze.stopped >= 4, `stopped ${freeze.stopped}`);
      const before = await count(tick);
      await pause(200);
      assert.equal(await count(tick), before, "the racer ran while frozen");
      assert.deepEqual(await freeze.release(), { held: true });
      const after = await count(tick);
      await pause(300);
      assert.ok(await count(tick) > after, "the racer did not run again after the thaw");
    }
  } finally {
    await stop(child);
  }
});

Deno.test("freeze: a process continued from outside during the freeze is seen on release", async () => {
  await using dir = await tempDir("deft-freeze-cont-");
  const tick = `${dir.path}/ticks`;
  const child = sandbox(dir.path, `while :; do (printf x >> ${tick}); done`);
  try {
    while (await count(tick) < 5) await pause(20);
    const freeze = await freezeSandboxes(20);
    // Something outside the model's reach breaks the freeze: SIGCONT to every process of the
    // sandbox, as a timer or the kernel could.
    const pids = await sandboxPids(child.pid);
    for (const pid of pids) Deno.kill(pid, "SIGCONT");
    await pause(200);
    const verdict = await freeze.release();
    assert.equal(verdict.held, false);
    assert.match(verdict.why ?? "", /ran during the freeze|running again/);
  } finally {
    await stop(child);
  }
});

Deno.test("freeze: a racer killing the helper leaves no false claim and nothing stopped", async () => {
  await using dir = await tempDir("deft-freeze-kill-");
  const tick = `${dir.path}/ticks`;
  // Kills every process of its sandbox it did not start (the helper Deft places there among
  // them) as fast as it can, and counts.
  const killer = `mine=" 1 $$ "; while :; do for p in /proc/[0-9]*; do p=\${p#/proc/}; ` +
    `[[ $mine == *" $p "* || $p == $BASHPID ]] || kill -9 $p 2>/dev/null; done; ` +
    `printf x >> ${tick}; done`;
  const child = sandbox(dir.path, killer);
  let held = 0;
  let refused = 0;
  try {
    while (await count(tick) < 5) await pause(20);
    for (let round = 0; round < 20; round++) {
      let freeze;
      try {
        freeze = await freezeSandboxes(20);
      } catch (e) {
        assert.ok(e instanceof FreezeRefused, String(e));
        refused++;
      }
      if (freeze) {
        // Claimed: then nothing moves until released.
        const before = await count(tick);
        await pause(100);
        assert.equal(await count(tick), before, "claimed frozen, but the killer ran");
        const verdict = await freeze.release();
        if (verdict.held) held++;
      }
      // Either way, everything runs again.
      const after = await count(tick);
      await pause(200);
      assert.ok(await count(tick) > after, `round ${round}: the sandbox was left stopped`);
    }
  } finally {
    await stop(child);
  }
});

Deno.test("freeze: a process the model stopped itself stays stopped after the thaw", async () => {
  await using dir = await tempDir("deft-freeze-kept-");
  const tick = `${dir.path}/ticks`;
  // The model's own doing: a background sleep it stopped, beside a loop that keeps running (in
  // its own session: a process leaving the sleep's group would orphan it, and the kernel would
  // hang the stopped sleep up).
  const child = sandbox(
    dir.path,
    `sleep 1000 & kill -STOP $!; ` +
      `setsid bash --norc -c 'while :; do (printf x >> ${tick}); done' & wait`,
  );
  try {
    while (await count(tick) < 5) await pause(20);
    const sleeper = await sleepPid(child.pid);
    for (let round = 0; round < 5; round++) {
      const freeze = await freezeSandboxes(20);
      assert.deepEqual(await freeze.release(), { held: true });
      const after = await count(tick);
      await pause(200);
      assert.ok(await count(tick) > after, `round ${round}: the loop did not run again`);
      assert.equal(await stateOf(sleeper), "T", `round ${round}: the thaw continued the sleep`);
    }
  } finally {
    await stop(child);
  }
});

/** The pid of the one stopped process (the model's sleep) in the sandbox under bwrap `pid`. */
async function sleepPid(pid: number): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    for (const p of await sandboxPids(pid)) {
      if (await stateOf(p) === "T") return p;
    }
    await pause(20);
  }
  throw new Error("no stopped process in the sandbox");
}

/** A process's state letter, as /proc/PID/stat gives it. */
async function stateOf(pid: number): Promise<string> {
  const stat = await statOf(pid);
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
}

/** /proc/PID/stat, read by bash (Deno reads another process's /proc only with every permission). */
async function statOf(pid: number): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: ["-c", `read -r s < /proc/${pid}/stat && echo "$s"`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

/** The pids of the processes under bwrap `pid` (its sandbox's first process and below). */
async function sandboxPids(pid: number): Promise<number[]> {
  const out = await new Deno.Command("bash", {
    args: [
      "-c",
      `q=(${pid}); while ((\${#q[@]})); do p=\${q[0]} q=("\${q[@]:1}"); echo $p; ` +
      `for t in /proc/$p/task/*/children; do c=(); read -r -a c < $t; q+=("\${c[@]}"); done; done`,
    ],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "").map(Number)
    .filter((p) => p !== pid);
}
