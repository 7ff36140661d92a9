/**
 * Every write by the editors is seen at once by tools that judge a file by its size and its mtime
 * in whole seconds. Python's bytecode cache is the one models meet: it runs with bytecode on here
 * (PYTHONDONTWRITEBYTECODE removed), as on users' machines.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withEditor } from "../../../helpers/editor.ts";
import { withJsonEditor } from "../../../helpers/json_editor.ts";

/** The environment with Python's bytecode cache on and in its usual place. */
function bytecodeOn(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.PYTHONDONTWRITEBYTECODE;
  delete env.PYTHONPYCACHEPREFIX;
  return env;
}

async function python(cwd: string, script: string): Promise<string> {
  const out = await new Deno.Command("python3", {
    args: [script],
    cwd,
    env: bytecodeOn(),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

async function mtimeSecond(path: string): Promise<number> {
  return Math.floor((await Deno.stat(path)).mtime!.getTime() / 1000);
}

/** Sleeps until just after the next whole second, so what follows shares one second. */
async function startOfSecond(): Promise<void> {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
}

Deno.test("bytecode on: run, same-size edit in the same second, run again prints the new value, 20 rounds", async () => {
  await withEditor(async ({ ws, call }) => {
    const module = join(ws, "a.py");
    await Deno.writeTextFile(module, "X = 10\n");
    await Deno.writeTextFile(join(ws, "t.py"), "import a\nprint(a.X)\n");
    let sameSecond = 0;
    for (let value = 10; value < 30; value++) {
      if (value % 5 === 0) await startOfSecond();
      assert.equal(await python(ws, "t.py"), String(value), `round ${value - 9}: before the edit`);
      const started = Math.floor(Date.now() / 1000);
      const before = await mtimeSecond(module);
      const r = await call({
        command: "str_replace",
        path: module,
        old_str: `X = ${value}`,
        new_str: `X = ${value + 1}`,
      });
      assert.equal(r.success, true, String(r.error));
      if (Math.floor(Date.now() / 1000) === started) sameSecond++;
      assert.ok(await mtimeSecond(module) > before, `round ${value - 9}: mtime moved on`);
      assert.equal(
        await python(ws, "t.py"),
        String(value + 1),
        `round ${value - 9}: stale bytecode`,
      );
    }
    // The rounds really were the case that matters: bytecode written, edits inside one second.
    assert.ok((await Deno.readDir(join(ws, "__pycache__"))[Symbol.asyncIterator]().next()).value);
    assert.ok(sameSecond >= 10, `only ${sameSecond} of 20 edits fell in the second of their run`);
  });
});

Deno.test("bytecode on: a file deleted and created again in the same second is seen as new", async () => {
  await withEditor(async ({ ws, call }) => {
    const module = join(ws, "a.py");
    await Deno.writeTextFile(join(ws, "t.py"), "import a\nprint(a.X)\n");
    for (let value = 1; value < 10; value += 2) {
      await startOfSecond();
      for (const shown of [value, value + 1]) {
        const r = await call({ command: "create", path: module, file_text: `X = ${shown}\n` });
        assert.equal(r.success, true, String(r.error));
        assert.equal(await python(ws, "t.py"), String(shown));
        await Deno.remove(module); // as `rm a.py` in the shell would
      }
    }
  });
});

Deno.test("a clock behind the file's mtime: the edit still gets a later mtime, one second on", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "value = 1\n");
    const future = Math.floor(Date.now() / 1000) + 3600;
    await Deno.utime(path, future, future);
    const r = await call({ command: "str_replace", path, old_str: "1", new_str: "2" });
    assert.equal(r.success, true, String(r.error));
    assert.equal(await mtimeSecond(path), future + 1);
  });
});

Deno.test("an edit after the file's second has passed keeps the clock's mtime", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "value = 1\n");
    const past = Math.floor(Date.now() / 1000) - 3600;
    await Deno.utime(path, past, past);
    const before = Date.now();
    const r = await call({ command: "str_replace", path, old_str: "1", new_str: "2" });
    assert.equal(r.success, true, String(r.error));
    const mtime = (await Deno.stat(path)).mtime!.getTime();
    assert.ok(mtime >= before - 1000 && mtime <= Date.now() + 1000, `mtime ${mtime}`);
  });
});

Deno.test("json_edit_tool's same-size edit in the same second gets a later whole-second mtime", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("c.json", '{"a": 1}\n');
    for (let value = 1; value < 4; value++) {
      const before = await mtimeSecond(path);
      const r = await call({
        operation: "set",
        file_path: path,
        json_path: "$.a",
        value: value + 1,
      });
      assert.equal(r.success, true, String(r.error));
      assert.equal(await Deno.readTextFile(path), `{"a": ${value + 1}}\n`);
      assert.ok(await mtimeSecond(path) > before);
    }
  });
});
