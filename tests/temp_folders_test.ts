/**
 * Tests make temporary folders only through tests/helpers/temp.ts (`tempDir()` in a block,
 * `tempDirUntilExit()` for a helper that hands a path out), so each one is removed whatever the
 * outcome. A folder made by hand is the leak that slips through: this check names each one.
 * tests/e2e/temp_leaks_test.ts proves, by running tests in a private temp root, that what the
 * helpers promise holds.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { tempDir } from "./helpers/temp.ts";

const TESTS = new URL(".", import.meta.url).pathname;
const HELPER = "helpers/temp.ts";

/** Calls that make a temporary file or folder by hand (Deno's and Node's). */
const BY_HAND = /\bmakeTemp(Dir|File)(Sync)?\s*\(|\bmkdtemp(Sync)?\s*\(/;

function* sources(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory && entry.name !== "fixtures") yield* sources(`${path}/`);
    else if (entry.isFile && /\.(ts|js|mjs)$/.test(entry.name)) yield path;
  }
}

/** Every line of the test tree (fixtures aside) that makes a temp folder or file by hand. */
export function tempFoldersByHand(root = TESTS): string[] {
  const found: string[] = [];
  for (const path of sources(root)) {
    const name = relative(root, path);
    if (name === HELPER) continue;
    Deno.readTextFileSync(path).split("\n").forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "").replace(/^\s*\*.*$/, "");
      if (BY_HAND.test(code)) found.push(`tests/${name}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

Deno.test("tests make temp folders only through tests/helpers/temp.ts", () => {
  const found = tempFoldersByHand();
  assert.deepEqual(
    found,
    [],
    `temp folders made by hand (left behind when the test fails or a helper forgets them):\n` +
      `${found.join("\n")}\n` +
      "use `await using dir = await tempDir()` from tests/helpers/temp.ts (or " +
      "`tempDirUntilExit()` in a helper that returns the path)",
  );
});

Deno.test("the check finds a temp folder made by hand, and not one in a comment", async () => {
  // Spelled in pieces, so that this file does not trip its own check.
  const dirCall = `Deno.makeTemp${"Dir"}()`;
  const fileCall = `Deno.makeTemp${"File"}Sync()`;
  await using dir = await tempDir("deft-temp-check-");
  const root = dir.path;
  await Deno.mkdir(`${root}/helpers`);
  await Deno.writeTextFile(`${root}/helpers/temp.ts`, `${dirCall};\n`);
  await Deno.writeTextFile(
    `${root}/a_test.ts`,
    `// ${dirCall} is not used here\nconst d = await ${dirCall};\n`,
  );
  await Deno.writeTextFile(`${root}/b_test.ts`, 'import { mkdtempSync } from "node:fs";\n');
  await Deno.writeTextFile(`${root}/c_test.ts`, `const f = ${fileCall};\n`);
  assert.deepEqual(tempFoldersByHand(`${root}/`).sort(), [
    `tests/a_test.ts:2: const d = await ${dirCall};`,
    `tests/c_test.ts:1: const f = ${fileCall};`,
  ]);
});
