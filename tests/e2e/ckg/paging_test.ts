/** `deft ckg search-*` takes `--offset` and `--limit` as a user types them, and refuses bad ones. */
import assert from "node:assert/strict";
import { tempDir, writeTree } from "../../helpers/ckg.ts";

async function deft(args: string[], cache: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    env: { DEFT_CACHE_DIR: cache },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, out: decode(out.stdout), err: decode(out.stderr) };
}

Deno.test("paging: deft ckg search-callers --offset --limit prints that page and the next flag", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(ws.path, {
    "m.py": "def t():\n    pass\n\ndef a():\n    t()\n\ndef b():\n    t()\n\ndef c():\n    t()\n",
  });
  const search = ["ckg", "search-callers", "t", "-w", ws.path, "--no-body"];
  const page = await deft([...search, "--offset", "1", "--limit", "1"], cache.path);
  assert.equal(page.code, 0, page.err);
  assert.equal(
    page.out,
    `Found 3 functions calling t:\n2. ${ws.path}/m.py:7-8 function b (calls at line 8)\n` +
      "<entries 2-2 of 3 shown; run again with --offset 2 for the next ones (--no-body shortens " +
      "each entry; a narrower --path shortens the list)>\n",
  );
  for (
    const [flag, value, why] of [
      ["--offset", "-1", "expected an integer ≥ 0"],
      ["--limit", "0", "expected a positive integer"],
      ["--offset", "two", "expected an integer ≥ 0"],
    ]
  ) {
    const bad = await deft([...search, flag, value], cache.path);
    assert.equal(bad.code, 2, `${flag} ${value}: ${bad.out}`);
    assert.equal(bad.out, "");
    assert.match(
      bad.err,
      new RegExp(`option '${flag} <n>' argument '${value}' is invalid. ${why}`),
    );
  }
});
