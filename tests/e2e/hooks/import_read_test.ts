/**
 * Issue 48, finding 6: `deft hooks import` reads the settings file it is given with a bound, and
 * never waits on it: a link to /dev/zero, a FIFO, a huge file and a FIFO swapped in after the
 * first look are each a clear error, at once.
 */
import assert from "node:assert/strict";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

/** `deft ARGS` in `cwd`, killed after `seconds` (then `killed` is true). */
async function deftWithin(args: string[], cwd: string, seconds: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args],
    cwd,
    env: { NO_COLOR: "1", DENO_DIR: denoDir(), HOME: cwd },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, seconds * 1000);
  const out = await child.output();
  clearTimeout(timer);
  return { code: out.code, killed, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("deft hooks import: a settings file linked to /dev/zero, a FIFO or a huge file is refused at once with a clear error", async () => {
  await using dir = await tempDir("deft-hooks-import-");
  await Deno.mkdir(`${dir.path}/.claude`);
  const settings = `${dir.path}/.claude/settings.json`;
  await Deno.symlink("/dev/zero", settings);
  const zero = await deftWithin(["hooks", "import", settings], dir.path, 20);
  assert.equal(zero.killed, false, "deft hooks import kept reading /dev/zero");
  assert.equal(zero.code, 2, zero.stderr);
  assert.match(zero.stderr, /settings\.json is a character device, not a regular file/);

  await Deno.remove(settings);
  const mkfifo = await new Deno.Command("mkfifo", { args: [settings] }).output();
  assert.ok(mkfifo.success);
  const fifo = await deftWithin(["hooks", "import", settings], dir.path, 20);
  assert.equal(fifo.killed, false, "deft hooks import waited on a FIFO");
  assert.equal(fifo.code, 2, fifo.stderr);
  assert.match(fifo.stderr, /settings\.json is a FIFO \(named pipe\), not a regular file/);

  await Deno.remove(settings);
  await Deno.writeTextFile(settings, `{"hooks":{},"pad":"${"x".repeat(2 * 1024 * 1024)}"}`);
  const huge = await deftWithin(["hooks", "import", settings], dir.path, 20);
  assert.equal(huge.code, 2, huge.stderr);
  assert.match(huge.stderr, /over the limit of 1048576 bytes/);
});

Deno.test("deft hooks import: a FIFO swapped in after the first look is refused, never waited on (reads against a racer that swaps it all the time, until it won 20 times)", async () => {
  await using dir = await tempDir("deft-hooks-race-");
  const d = dir.path;
  await Deno.writeTextFile(`${d}/real.json`, `{"hooks":{}}`);
  const mkfifo = await new Deno.Command("mkfifo", { args: [`${d}/pipe`] }).output();
  assert.ok(mkfifo.success);
  await Deno.symlink("real.json", `${d}/settings.json`);
  // The racer swaps the link between the regular file and the FIFO as fast as it can.
  const racer = new Deno.Command("python3", {
    args: [
      "-c",
      [
        "import os, sys",
        "os.chdir(sys.argv[1])",
        "os.symlink('pipe', 't1'); os.symlink('real.json', 't2')",
        "while True:",
        "    os.rename('t1', 'settings.json'); os.symlink('pipe', 't1')",
        "    os.rename('t2', 'settings.json'); os.symlink('real.json', 't2')",
      ].join("\n"),
      d,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  // The reader runs apart, so a read that waits on the FIFO shows as a hang, not a stuck test.
  const reader = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "-",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const script = `
    import { readOwnText } from ${JSON.stringify(`${REPO_ROOT}src/policy/own_file.ts`)};
    const counts = { read: 0, fifo: 0, swapped: 0, other: 0 };
    // Until the race was lost 20 times (a FIFO after the first look), or 45 s.
    const until = Date.now() + 45_000;
    for (let i = 0; i < 1_000_000 && counts.swapped < 20 && Date.now() < until; i++) {
      try {
        await readOwnText(${
    JSON.stringify(`${d}/settings.json`)
  }, { limit: 1 << 20, what: "a settings file" });
        counts.read++;
      }
      catch (e) {
        if (/FIFO.*changed after the first look/.test(e.message)) counts.swapped++;
        else if (/FIFO/.test(e.message)) counts.fifo++;
        else counts.other++;
      }
    }
    console.log(JSON.stringify(counts));
  `;
  const writer = reader.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    reader.kill("SIGKILL");
  }, 90_000);
  const out = await reader.output();
  clearTimeout(timer);
  racer.kill("SIGKILL");
  await racer.status;
  assert.equal(hung, false, "a read waited on the FIFO swapped in after its first look");
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const counts = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(counts.other, 0, JSON.stringify(counts));
  // The race was lost (the FIFO came after the first look) and still nothing waited.
  assert.ok(counts.swapped > 0, `the racer never won: ${JSON.stringify(counts)}`);
  console.log(`race outcomes of the reads: ${JSON.stringify(counts)}`);
});
