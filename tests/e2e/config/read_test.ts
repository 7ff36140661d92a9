import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError } from "../../../src/config/errors.ts";
import { readConfigFile } from "../../../src/config/read.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("a regular file within the limit is read; one byte over is refused, naming it", async () => {
  await using tmp = await tempDir("deft-read-");
  const path = join(tmp.path, "c.yaml");
  await Deno.writeTextFile(path, "x".repeat(16));
  assert.equal(await readConfigFile(path, 16), "x".repeat(16));
  await Deno.writeTextFile(path, "x".repeat(17));
  await assert.rejects(readConfigFile(path, 16), (e: Error) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /c\.yaml: the config file is 17 bytes, over the limit of 16 bytes/);
    return true;
  });
});

Deno.test("a device, a FIFO and a folder are refused before anything is read", async () => {
  await using tmp = await tempDir("deft-read-");
  const zero = join(tmp.path, "zero.yaml");
  await Deno.symlink("/dev/zero", zero);
  const fifo = join(tmp.path, "fifo.yaml");
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  const cases: [string, RegExp][] = [
    [zero, /zero\.yaml is a character device, not a regular file/],
    [fifo, /fifo\.yaml is a FIFO \(named pipe\), not a regular file/],
    [tmp.path, /is a folder, not a regular file/],
  ];
  for (const [path, message] of cases) {
    const started = performance.now();
    // A read that waited on the FIFO would never settle: give it a deadline instead of hanging.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<string>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${path}: still reading after 5 s`)), 5000);
    });
    try {
      await assert.rejects(Promise.race([readConfigFile(path), late]), (e: Error) => {
        assert.ok(e instanceof ConfigError, e.message);
        assert.match(e.message, message);
        return true;
      });
    } finally {
      clearTimeout(timer);
    }
    assert.ok(performance.now() - started < 1000, path);
  }
});

Deno.test("a missing file is NotFound, for the caller to judge", async () => {
  await assert.rejects(readConfigFile("/nonexistent/deft.yaml"), Deno.errors.NotFound);
});
