/**
 * Keeping a workspace name and putting it back (what `/init` does to AGENTS.md), from the
 * attacker's side: the name swapped for a symlink to an outside file, a repository's symlink to an
 * outside secret, a FIFO. The outside file is a marker in a temp folder; it must never be written,
 * and its content must never land in the workspace.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { keepFile, putBack } from "../../../../src/tools/fs/keep.ts";
import { tempDir } from "../../../helpers/temp.ts";

const ORIGINAL = "# Project\nRun `make test`.\n";
const MARKER = "MARKER: the outside file, untouched\n";

/** A workspace with AGENTS.md and an outside folder holding the marker file. */
async function places() {
  const ws = await tempDir("deft-keep-ws-");
  const outside = await tempDir("deft-keep-outside-");
  const marker = join(outside.path, "bashrc");
  await Deno.writeTextFile(marker, MARKER);
  return {
    agents: join(ws.path, "AGENTS.md"),
    marker,
    ws: ws.path,
    async [Symbol.asyncDispose]() {
      await ws.remove();
      await outside.remove();
    },
  };
}

/** Every regular file's content under `dir`, for "no copy of the marker here". */
async function contents(dir: string): Promise<string> {
  let all = "";
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    const info = await Deno.lstat(path);
    if (info.isFile) all += await Deno.readTextFile(path);
    else if (info.isDirectory) all += await contents(path);
  }
  return all;
}

function mkfifo(path: string): void {
  const made = new Deno.Command("mkfifo", { args: [path] }).outputSync();
  assert.equal(made.success, true, "mkfifo");
}

Deno.test("putBack: AGENTS.md swapped for a symlink to an outside file is replaced, never written through", async () => {
  await using p = await places();
  await Deno.writeTextFile(p.agents, ORIGINAL);
  await Deno.chmod(p.agents, 0o640);
  const kept = keepFile(p.agents);
  // The model: rm AGENTS.md && ln -s ~/.bashrc AGENTS.md
  await Deno.remove(p.agents);
  await Deno.symlink(p.marker, p.agents);
  const outcome = await putBack(p.agents, kept);
  assert.equal(outcome.done, "restored");
  assert.equal(outcome.found, `a symbolic link to ${p.marker}`);
  assert.equal(await Deno.readTextFile(p.marker), MARKER, "the outside file was written");
  const info = await Deno.lstat(p.agents);
  assert.ok(info.isFile && !info.isSymlink, "AGENTS.md is a regular file again");
  assert.equal(info.mode! & 0o777, 0o640);
  assert.equal(await Deno.readTextFile(p.agents), ORIGINAL);
});

Deno.test("keepFile: a repository's symlink to an outside secret is never read; the link itself is put back", async () => {
  await using p = await places();
  await Deno.symlink(p.marker, p.agents);
  const kept = keepFile(p.agents);
  assert.deepEqual(kept, { kind: "symlink", target: p.marker });
  // The model replaces the link with a plain file.
  await Deno.remove(p.agents);
  await Deno.writeTextFile(p.agents, "the model's text\n");
  const outcome = await putBack(p.agents, kept);
  assert.equal(outcome.done, "restored");
  assert.equal(outcome.found, "a regular file");
  assert.equal(await Deno.readLink(p.agents), p.marker, "the link is back as a link");
  await Deno.remove(p.agents);
  assert.ok(!(await contents(p.ws)).includes("MARKER"), "the secret was copied into the workspace");
  assert.equal(await Deno.readTextFile(p.marker), MARKER);
});

Deno.test("putBack: a deleted AGENTS.md is put back, as a changed one is; an unchanged one is left alone", async () => {
  await using p = await places();
  await Deno.writeTextFile(p.agents, ORIGINAL);
  const kept = keepFile(p.agents);
  const ino = (await Deno.stat(p.agents)).ino;
  assert.deepEqual(await putBack(p.agents, kept), { done: "unchanged", found: "a regular file" });
  assert.equal((await Deno.stat(p.agents)).ino, ino, "an unchanged file is not rewritten");
  await Deno.remove(p.agents);
  assert.deepEqual(await putBack(p.agents, kept), { done: "restored", found: "missing" });
  assert.equal(await Deno.readTextFile(p.agents), ORIGINAL);
  await Deno.writeTextFile(p.agents, "# hijacked\n");
  assert.deepEqual(await putBack(p.agents, kept), { done: "restored", found: "a regular file" });
  assert.equal(await Deno.readTextFile(p.agents), ORIGINAL);
});

Deno.test("putBack: a FIFO or a hard link to an outside file put in AGENTS.md's place is replaced without being opened", async () => {
  await using p = await places();
  await Deno.writeTextFile(p.agents, ORIGINAL);
  const kept = keepFile(p.agents);
  await Deno.remove(p.agents);
  mkfifo(p.agents);
  const outcome = await neverOpened(p.agents, () => putBack(p.agents, kept));
  assert.deepEqual(outcome, { done: "restored", found: "a FIFO (named pipe)" });
  assert.equal(await Deno.readTextFile(p.agents), ORIGINAL);
  await Deno.remove(p.agents);
  await Deno.link(p.marker, p.agents);
  const linked = await putBack(p.agents, kept);
  assert.equal(linked.done, "restored");
  assert.equal(await Deno.readTextFile(p.agents), ORIGINAL);
  assert.equal(await Deno.readTextFile(p.marker), MARKER, "the outside file was written");
});

Deno.test("keepFile: a FIFO is never opened and not put back; a folder in its place is refused, said why", async () => {
  await using p = await places();
  mkfifo(p.agents);
  const kept = await neverOpened(p.agents, () => Promise.resolve(keepFile(p.agents)));
  assert.equal(kept.kind, "other");
  assert.deepEqual(await neverOpened(p.agents, () => putBack(p.agents, kept)), {
    done: "unchanged",
    found: "a FIFO (named pipe)",
  });
  await Deno.remove(p.agents);
  await Deno.writeTextFile(p.agents, "x");
  const refused = await putBack(p.agents, kept);
  assert.equal(refused.done, "refused");
  assert.match(refused.why!, /it was a FIFO \(named pipe\) and Deft never opens one/);
  // A regular file whose name became a folder with something in it cannot be renamed over.
  await Deno.remove(p.agents);
  await Deno.writeTextFile(p.agents, ORIGINAL);
  const file = keepFile(p.agents);
  await Deno.remove(p.agents);
  await Deno.mkdir(p.agents);
  await Deno.writeTextFile(join(p.agents, "inside"), "x");
  const blocked = await putBack(p.agents, file);
  assert.equal(blocked.done, "refused");
  assert.equal(blocked.found, "a folder");
  assert.ok(blocked.why);
  const left = [...Deno.readDirSync(p.ws)].map((e) => e.name).filter((n) => n.includes(".deft-"));
  assert.deepEqual(left, [], "a scratch file was left behind");
});

/**
 * Runs `fn` with a writer waiting on the FIFO at `path`, and asserts the FIFO was never opened for
 * reading: the writer is still waiting afterwards. Were Deft to open it, the writer would hand it a
 * line and exit instead of leaving Deft waiting for ever, so the test cannot hang.
 */
async function neverOpened<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const writer = new Deno.Command("sh", {
    args: ["-c", 'exec printf "FIFO CONTENT\\n" > "$1"', "sh", path],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    // Give the writer time to reach its open and block there.
    await new Promise((r) => setTimeout(r, 200));
    const result = await fn();
    const exited = await Promise.race([
      writer.status.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 300)),
    ]);
    assert.equal(exited, false, "the FIFO was opened for reading");
    return result;
  } finally {
    try {
      writer.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await writer.status;
  }
}
