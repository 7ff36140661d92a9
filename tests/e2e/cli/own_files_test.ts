/**
 * The files Deft reads for itself, named on its command line or found in a folder it is pointed
 * at: a recording to replay, a resume's trajectory, a task file (`-f`), a batch's task file, a
 * batch folder for `deft report`, and AGENTS.md. Each may be a FIFO, a link to /dev/zero or a
 * huge (sparse) file; Deft refuses each at once with a clear message, never hangs, never reads
 * without bound.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { loadProjectInstructions } from "../../../src/agent/instructions.ts";

/** Long enough on a loaded machine; a Deft that hangs or reads /dev/zero is killed there. */
const DEADLINE_MS = 60_000;

/** `deft ARGS`, killed at the deadline; `late` says whether it was. */
async function deft(args: string[], home: string) {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args],
    cwd: home,
    env: { NO_COLOR: "1", DENO_DIR: denoDir(), HOME: home, XDG_STATE_HOME: `${home}/state` },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(DEADLINE_MS),
  }).output();
  const late = performance.now() - started >= DEADLINE_MS;
  return { late, code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

/** A FIFO, a link to /dev/zero and a 300 MB sparse file, each named `name` in its own folder. */
async function hostile(root: string, name: string) {
  const made: { kind: string; path: string; why: RegExp }[] = [];
  for (const kind of ["fifo", "zero", "huge"]) {
    await Deno.mkdir(join(root, kind));
    const path = join(root, kind, name);
    if (kind === "fifo") {
      assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success);
      made.push({ kind, path, why: /is a FIFO \(named pipe\), not a regular file/ });
    } else if (kind === "zero") {
      await Deno.symlink("/dev/zero", path);
      made.push({ kind, path, why: /is a character device, not a regular file/ });
    } else {
      const file = await Deno.open(path, { write: true, create: true });
      await file.truncate(300 * 1024 * 1024);
      file.close();
      made.push({ kind, path, why: /is 314572800 bytes, over the limit of \d+ bytes/ });
    }
  }
  return made;
}

for (
  const [name, file, args, said] of [
    ["--replay", "rec.json", (p: string) => ["run", "--replay", p, "-w", dirname(p)], /replay/],
    ["--resume FILE", "trajectory_x.json", (p: string) => ["run", "-r", p, "-w", dirname(p)], /./],
    ["-f", "task.md", (p: string) => ["run", "-f", p, "-w", dirname(p)], /the task file/],
    ["batch's task file", "tasks.jsonl", (p: string) => ["batch", p, "--out", `${p}.out`], /./],
  ] as const
) {
  Deno.test(`deft ${name}: a FIFO, a link to /dev/zero and a huge file are refused at once`, async () => {
    await using temp = await tempDir("deft-own-");
    // Every kind is tried, and every one that fails is named.
    const failed: string[] = [];
    for (const { kind, path, why } of await hostile(temp.path, file)) {
      const r = await deft(args(path), temp.path);
      // A resume looks before it reads, and says so in its own words.
      const expected = name === "--resume FILE" && kind !== "huge" ? /not a regular file/ : why;
      if (r.late) failed.push(`${kind}: still running after ${DEADLINE_MS} ms`);
      else if (r.code !== 2 || !expected.test(r.stderr) || !said.test(r.stderr)) {
        failed.push(`${kind}: exit ${r.code}: ${r.stderr.slice(0, 300)}`);
      }
    }
    assert.deepEqual(failed, []);
  });
}

Deno.test("deft report of a batch folder with a FIFO, /dev/zero and huge files: written, each noted", async () => {
  await using temp = await tempDir("deft-own-");
  const out = join(temp.path, "out");
  await Deno.mkdir(join(out, "t1"), { recursive: true });
  await Deno.mkdir(join(out, "t2"), { recursive: true });
  await Deno.writeTextFile(
    join(out, "results.jsonl"),
    '{"id":"t1","status":"completed","index":0}\n{"id":"t2","status":"completed","index":1}\n',
  );
  assert.ok(
    (await new Deno.Command("mkfifo", { args: [join(out, "predictions.jsonl")] }).output()).success,
  );
  await Deno.symlink("/dev/zero", join(out, "t1", "trajectory.json"));
  await Deno.symlink("/dev/zero", join(out, "t1", "patch.diff"));
  const huge = await Deno.open(join(out, "t2", "trajectory.json"), { write: true, create: true });
  await huge.truncate(300 * 1024 * 1024);
  huge.close();
  const page = join(temp.path, "r.html");
  const r = await deft(["report", out, "-o", page], temp.path);
  assert.equal(r.late, false, `still running after ${DEADLINE_MS} ms`);
  assert.equal(r.code, 0, r.stderr);
  const html = await Deno.readTextFile(page);
  assert.match(html, /trajectory\.json is a character device, not a regular file/);
  assert.match(html, /trajectory\.json: a trajectory is 314572800 bytes, over the limit/);
});

Deno.test("AGENTS.md swapped for a FIFO while Deft reads it (a racer, 300 loads): never waits", async () => {
  await using temp = await tempDir("deft-own-");
  const repo = temp.path;
  assert.ok((await new Deno.Command("git", { args: ["init", "-q", repo] }).output()).success);
  await Deno.writeTextFile(join(repo, "AGENTS.md"), "RULE\n");
  const racer = new Deno.Command("bash", {
    args: [
      "-c",
      'cd "$1"; while :; do mkfifo f.tmp; mv -f f.tmp AGENTS.md; echo RULE > r.tmp; ' +
      "mv -f r.tmp AGENTS.md; done",
      "racer",
      repo,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let found = 0;
  try {
    for (let i = 0; i < 300; i++) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`load ${i} waited on the FIFO`)), 10_000);
      });
      const loaded = await Promise.race([loadProjectInstructions(repo), late]).finally(() =>
        clearTimeout(timer)
      );
      found += loaded.files.length;
    }
  } finally {
    racer.kill("SIGKILL");
    await racer.status;
  }
  assert.ok(found > 0, "the file was read when it was a file");
});
