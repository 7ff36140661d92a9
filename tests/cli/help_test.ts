/**
 * `deft --help` and `deft --version` answer without commander (src/cli/help.ts), from the tables
 * the full program is built from (src/cli/spec.ts): the text must be commander's own, at every
 * width, and the path must load neither commander nor Node's compatibility layer.
 */
import assert from "node:assert/strict";
import { fastAnswer, topLevelHelp } from "../../src/cli/help.ts";
import { commanderHelp } from "../../src/cli/program.ts";
import { VERSION } from "../../src/version.ts";
import { loadedModules } from "../helpers/imports.ts";

Deno.test("fastAnswer: --version, -V, --help and -h alone answer; anything else goes on", () => {
  assert.equal(fastAnswer(["--version"], 80), `${VERSION}\n`);
  assert.equal(fastAnswer(["-V"], 80), `${VERSION}\n`);
  assert.equal(fastAnswer(["--help"], 80), topLevelHelp(80));
  assert.equal(fastAnswer(["-h"], 80), topLevelHelp(80));
  for (
    const args of [
      [],
      ["help"],
      ["--help", "run"],
      ["run", "--help"],
      ["--version", "run"],
      ["run", "--version"],
      ["-v"],
      ["-H"],
      ["--help="],
    ]
  ) {
    assert.equal(fastAnswer(args, 80), undefined, args.join(" "));
  }
});

Deno.test("deft --help without commander is commander's help, byte for byte, at every width", () => {
  // Off a terminal commander uses 80 columns; on one, the terminal's (narrow ones unwrapped).
  for (const width of [undefined, 20, 39, 40, 60, 79, 80, 81, 100, 132, 250]) {
    const fast = fastAnswer(["--help"], width);
    assert.equal(fast, commanderHelp(width), `width ${width}`);
  }
  // Every command and launch option is in it (a command added to program.ts alone fails above).
  const help = topLevelHelp(80);
  for (const word of ["run|exec [options] [task]", "--approval <mode>", "-r, --resume [id]"]) {
    assert.ok(help.includes(word), word);
  }
});

Deno.test("deft --help and --version load neither commander nor any node: or npm module", () => {
  // What main.ts loads before it answers: help.ts and io.ts, and what they import.
  const { files, outside } = loadedModules([
    new URL("../../src/cli/help.ts", import.meta.url),
    new URL("../../src/cli/io.ts", import.meta.url),
  ]);
  assert.deepEqual(outside, [], "the help path must stay light (each costs every start)");
  assert.ok(files.length > 4, `the walk found the modules (${files.length})`);
  // main.ts's first round of imports: io.ts and, for a lone option, help.ts; the fast path's
  // parser only for a line help.ts cannot answer.
  const main = Deno.readTextFileSync(new URL("../../main.ts", import.meta.url));
  const first = main.slice(
    main.indexOf("function firstModules"),
    main.indexOf("async function main"),
  );
  assert.deepEqual(
    [...first.matchAll(/import\("([^"]+)"\)/g)].map((m) => m[1]),
    ["./src/cli/io.ts", "./src/cli/help.ts"],
    "main.ts loads only help.ts and io.ts before it answers --help and --version",
  );
  assert.match(first, /answerable \? undefined : loadFastPath\(\)/);
});
