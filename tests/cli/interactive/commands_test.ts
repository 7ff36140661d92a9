/** `/help` in `deft interactive` (issue 52): every command and key, each description aligned. */
import assert from "node:assert/strict";
import { helpText } from "../../../src/cli/interactive/commands.ts";

Deno.test("/help lists every command and key, each description starting in one column", () => {
  const lines = helpText().split("\n");
  const keys = lines.indexOf("Keys:");
  assert.ok(lines.indexOf("Commands:") >= 0 && keys > lines.indexOf("Commands:"), helpText());
  const entries = lines.slice(lines.indexOf("Commands:") + 1).filter((l) => l !== "Keys:");
  // Each entry is `  NAME  description`; a long name has its description on the next line.
  const column = (line: string) =>
    /^ {2}\S.*? {2,}(?=\S)/.exec(line)?.[0].length ??
      /^ +(?=\S)/.exec(line)![0].length;
  const columns = new Set(entries.filter((l) => /\S {2,}\S|^ {3,}/.test(l)).map(column));
  assert.equal(columns.size, 1, `descriptions start in ${[...columns]}:\n${helpText()}`);
  const rewind = entries.findIndex((l) => l.startsWith("  /rewind"));
  assert.match(entries.slice(rewind, rewind + 2).join("\n"), /go back to a turn's checkpoint/);
  const named = lines.slice(keys + 1).map((l) => l.trim().split(/ {2,}/)[0]);
  for (const key of ["@PATH", "!COMMAND", "!", "Esc", "Esc Esc", "Ctrl-R", "Ctrl-C", "Ctrl-D"]) {
    assert.ok(named.includes(key), `${key} missing:\n${helpText()}`);
  }
  assert.ok(named.some((k) => k.includes("Alt-Enter")), helpText());
});
