/**
 * The "promises" lists at the top of test files (issue 50) tell a reader what is guarded and by
 * which test. A list that quotes a test no longer there says a promise is guarded when it is not,
 * so every name a list quotes is looked for in the file it names (read from disk; this test
 * starts no process).
 *
 * A list is the top comment of a test file that speaks of its promises ("Promises of …", "The
 * promises of …", "Promises guarded here"); each bullet (`- …`) says the promise, then after a
 * colon names tests in quotes, in that file unless a `…_test.ts` is named before the quote in the
 * same bullet. An ellipsis (…) in a quote stands for words left out; the parts around it must all
 * be in the named file's text.
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const TESTS = join(ROOT, "tests");

const LIST = /[Pp]romises (of|guarded)|[Tt]he promises of/;
const TOKEN = /((?:tests\/)?[\w/.]*_test\.ts)|"([^"]+)"/g;

async function testFiles(dir: string, out: string[] = []): Promise<string[]> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && entry.name !== "fixtures") await testFiles(path, out);
    else if (entry.name.endsWith("_test.ts")) out.push(path);
  }
  return out;
}

/** A file's top comment, and the rest of its text (backslash escapes of template names gone). */
function split(text: string): { head: string; body: string } {
  const end = text.startsWith("/**") ? text.indexOf("*/") : -1;
  if (end < 0) return { head: "", body: text.replaceAll("\\`", "`") };
  return { head: text.slice(0, end), body: text.slice(end + 2).replaceAll("\\`", "`") };
}

/** The bullets of a top comment, each as one line of text. */
function bullets(head: string): string[] {
  const out: string[] = [];
  for (const line of head.split("\n").map((l) => l.replace(/^\s*\/?\*+\s?/, ""))) {
    if (/^\s*- /.test(line)) out.push(line.replace(/^\s*- /, ""));
    else if (out.length > 0 && line.trim() !== "") out[out.length - 1] += ` ${line.trim()}`;
    else if (line.trim() === "" && out.length > 0) out.push("");
  }
  return out.filter((b) => b !== "");
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** Every quote of every list that its named file does not hold, as "list: name (file)". */
async function unresolved(): Promise<{ lists: number; wrong: string[] }> {
  const wrong: string[] = [];
  let lists = 0;
  const bodies = new Map<string, string>();
  const bodyOf = async (path: string) => {
    if (!bodies.has(path)) bodies.set(path, split(await Deno.readTextFile(path)).body);
    return bodies.get(path)!;
  };
  for (const file of (await testFiles(TESTS)).sort()) {
    const { head } = split(await Deno.readTextFile(file));
    if (!LIST.test(head)) continue;
    lists++;
    for (const bullet of bullets(head)) {
      let named = file;
      const colon = bullet.indexOf(": ");
      if (colon < 0) continue;
      for (const m of bullet.slice(colon).matchAll(TOKEN)) {
        if (m[1]) {
          const candidates = m[1].startsWith("tests/")
            ? [join(ROOT, m[1])]
            : [join(dirname(file), m[1]), join(dirname(named), m[1])];
          named = candidates[0];
          for (const c of candidates) if (await exists(c)) named = c;
          continue;
        }
        const where = `${relative(ROOT, file)}: "${m[2]}" (${relative(ROOT, named)})`;
        if (!(await exists(named))) {
          wrong.push(`${where}: no such file`);
          continue;
        }
        const body = await bodyOf(named);
        const parts = m[2].split("…").map((p) => p.trim()).filter((p) => p !== "");
        if (!parts.every((p) => body.includes(p))) wrong.push(where);
      }
    }
  }
  return { lists, wrong };
}

Deno.test("every test a promises list names is in the file it names", async () => {
  const { lists, wrong } = await unresolved();
  assert.ok(lists >= 12, `only ${lists} promises lists found: is the header pattern still right?`);
  assert.deepEqual(wrong, [], `promises lists name tests that are not there:\n${wrong.join("\n")}`);
});
