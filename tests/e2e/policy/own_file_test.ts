/**
 * `readOwnFile`, the one reader of the files Deft reads for itself: a FIFO, a link to /dev/zero
 * and an over-size file are refused at once with a clear error; a FIFO swapped in while Deft
 * looks never holds the read.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { OwnFileError, readOwnFile, readOwnText } from "../../../src/policy/own_file.ts";
import { tempDir } from "../../helpers/temp.ts";

const OPTIONS = { limit: 1024, what: "a test file", hint: "Give a small file." };

/** `promise`, or a failure after `ms`: a read blocked on a FIFO would otherwise hang the test. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(made.success, "mkfifo");
}

Deno.test("a FIFO, a link to /dev/zero and a folder are refused before anything is read", async () => {
  await using temp = await tempDir("deft-own-");
  const fifo = join(temp.path, "fifo.json");
  await mkfifo(fifo);
  const zero = join(temp.path, "zero.json");
  await Deno.symlink("/dev/zero", zero);
  for (
    const [path, why] of [
      [fifo, /fifo\.json is a FIFO \(named pipe\), not a regular file; a test file is read only/],
      [zero, /zero\.json is a character device, not a regular file/],
      [temp.path, /is a folder, not a regular file/],
    ] as const
  ) {
    for (const atStart of [false, true]) {
      const read = readOwnFile(path, { ...OPTIONS, atStart }).then(() => null, (e) => e);
      const e = await within(5_000, read, path);
      assert.ok(e instanceof OwnFileError, `${path}: ${e}`);
      assert.match(e.message, why);
      assert.match(e.message, /Give a small file\./);
    }
  }
});

Deno.test("an over-size file is refused by its size, or cut at the limit when asked", async () => {
  await using temp = await tempDir("deft-own-");
  const big = join(temp.path, "big.json");
  await Deno.writeTextFile(big, "x".repeat(1025));
  for (const atStart of [false, true]) {
    const e = await readOwnFile(big, { ...OPTIONS, atStart }).then(() => null, (e) => e);
    assert.ok(e instanceof OwnFileError, String(e));
    assert.match(e.message, /big\.json: a test file is 1025 bytes, over the limit of 1024 bytes/);
  }
  const cut = await readOwnFile(big, { ...OPTIONS, cut: true });
  assert.equal(cut.bytes.length, 1024);
  assert.equal(cut.cut, true);
  const small = join(temp.path, "small.json");
  await Deno.writeTextFile(small, "ünïcode");
  assert.equal(await readOwnText(small, OPTIONS), "ünïcode");
  await assert.rejects(readOwnFile(join(temp.path, "missing"), OPTIONS), Deno.errors.NotFound);
});

Deno.test("a racer swapping the file for a FIFO never holds a read (2000 reads)", async () => {
  await using temp = await tempDir("deft-own-");
  const path = join(temp.path, "swapped.json");
  await Deno.writeTextFile(path, "{}");
  // The racer: a shell loop that swaps a FIFO and a regular file in place, as fast as it can.
  const racer = new Deno.Command("bash", {
    args: [
      "-c",
      'cd "$1"; while :; do mkfifo f.tmp; mv -f f.tmp swapped.json; echo "{}" > r.tmp; ' +
      "mv -f r.tmp swapped.json; done",
      "racer",
      temp.path,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let read = 0;
  let refused = 0;
  try {
    for (let i = 0; i < 2000; i++) {
      const result = await within(
        10_000,
        readOwnText(path, OPTIONS).then((t) => t, (e) => e),
        `read ${i}`,
      );
      if (typeof result === "string") read++;
      else if (result instanceof OwnFileError || result instanceof Deno.errors.NotFound) refused++;
      else throw result;
    }
  } finally {
    racer.kill("SIGKILL");
    await racer.status;
  }
  assert.equal(read + refused, 2000);
  // The race was lost many times over: FIFOs were met, and refused without waiting.
  assert.ok(refused > 50, `only ${refused} of 2000 reads met the FIFO`);
});

Deno.test("a file growing while it is read is never read past the limit (50 reads)", async () => {
  await using temp = await tempDir("deft-own-");
  const path = join(temp.path, "growing.log");
  const limit = 256 * 1024;
  for (let i = 0; i < 50; i++) {
    await Deno.writeTextFile(path, "");
    // A writer that appends as fast as it can, started just before each read.
    const writer = new Deno.Command("bash", {
      args: ["-c", 'exec yes grow >> "$1"', "writer", path],
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const result = await within(
        10_000,
        readOwnFile(path, { limit, what: "a log" }).then((r) => r, (e) => e),
        `read ${i}`,
      );
      if (result instanceof OwnFileError) assert.match(result.message, /over the limit/);
      else if (result instanceof Error) throw result;
      else assert.ok(result.bytes.length <= limit, `${result.bytes.length} bytes read`);
    } finally {
      writer.kill("SIGKILL");
      await writer.status;
    }
  }
});
