/**
 * The byte-exact golden matrix: {LF, CRLF, mixed} × {tabs, spaces} × {BOM, no BOM} × {final
 * newline, none}. Every file is edited (str_replace one line, str_replace across lines, insert in
 * the middle, insert at the end) and compared byte for byte with the expected file, then undone
 * and compared with the original.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withEditor } from "../../helpers/editor.ts";

type Break = "\n" | "\r\n";
/** A line and the break after it (dropped for the last line of a file without a final newline). */
type Line = [text: string, lineBreak: Break];

const BREAKS: Record<string, Break[]> = {
  LF: ["\n", "\n", "\n", "\n", "\n"],
  CRLF: ["\r\n", "\r\n", "\r\n", "\r\n", "\r\n"],
  mixed: ["\r\n", "\r\n", "\n", "\r\n", "\n"],
};

function build(lines: Line[], bom: boolean, finalNewline: boolean): Uint8Array {
  const text = lines.map(([t, b], i) => t + (i < lines.length - 1 || finalNewline ? b : ""))
    .join("");
  const body = new TextEncoder().encode(text);
  return bom ? new Uint8Array([0xef, 0xbb, 0xbf, ...body]) : body;
}

function show(bytes: Uint8Array): string {
  return JSON.stringify(new TextDecoder().decode(bytes));
}

interface Case {
  name: string;
  args: (path: string) => Record<string, unknown>;
  expected: (L: string[], B: Break[], I: string, finalNewline: boolean) => Line[];
}

const CASES: Case[] = [
  {
    name: "str_replace one line with two",
    args: (path) => ({
      command: "str_replace",
      path,
      old_str: "return 1;",
      new_str: "const y = 2;\n\t\treturn y;",
    }),
    expected: (L, B, I) => [
      [L[0], B[0]],
      [L[1], B[1]],
      [`${I}${I}const y = 2;`, B[2]],
      [`${I}${I}return y;`, B[2]],
      [L[3], B[3]],
      [L[4], B[4]],
    ],
  },
  {
    name: "str_replace across lines 1-4",
    args: (path) => ({
      command: "str_replace",
      path,
      old_str: "function f() {\n\tif (x) {\n\t\treturn 1;\n\t}",
      new_str: "function g() {\n\treturn 2;\n}",
    }),
    // Three breaks replaced (B[0], B[1], B[2]); the majority decides the new text's breaks.
    expected: (L, B, _I) => {
      const votes = B.slice(0, 3).filter((b) => b === "\r\n").length;
      const M: Break = votes >= 2 ? "\r\n" : "\n";
      return [["function g() {", M], ["\treturn 2;", M], ["}", B[3]], [L[4], B[4]]];
    },
  },
  {
    name: "insert after line 1",
    args: (path) => ({ command: "insert", path, insert_line: 1, new_str: "// note" }),
    expected: (L, B) => [
      [L[0], B[0]],
      ["// note", B[0]],
      [L[1], B[1]],
      [L[2], B[2]],
      [L[3], B[3]],
      [L[4], B[4]],
    ],
  },
  {
    name: "insert after the last line",
    args: (path) => ({ command: "insert", path, insert_line: 5, new_str: "// end" }),
    // Without a final newline the old last line gets the previous line's break, the new one none.
    expected: (L, B, _I, finalNewline) => [
      ...L.slice(0, 4).map((t, i): Line => [t, B[i]]),
      [L[4], finalNewline ? B[4] : B[3]],
      ["// end", B[4]],
    ],
  },
];

for (const [eolName, B] of Object.entries(BREAKS)) {
  for (const [indentName, I] of [["tabs", "\t"], ["spaces", "    "]] as const) {
    for (const bom of [true, false]) {
      for (const finalNewline of [true, false]) {
        const label = `${eolName}, ${indentName}, ${bom ? "BOM" : "no BOM"}, ` +
          `${finalNewline ? "final newline" : "no final newline"}`;
        Deno.test(`golden: ${label}`, async () => {
          const L = ["function f() {", `${I}if (x) {`, `${I}${I}return 1;`, `${I}}`, "}"];
          const original = build(L.map((t, i) => [t, B[i]]), bom, finalNewline);
          await withEditor(async ({ ws, call }) => {
            for (const c of CASES) {
              const path = join(ws, "file.ts");
              await Deno.writeFile(path, original);
              const args = c.args(path);
              if (I === "    " && typeof args.old_str === "string") {
                args.old_str = args.old_str.replaceAll("\t", I);
                args.new_str = (args.new_str as string).replaceAll("\t", I);
              }
              const result = await call(args);
              assert.equal(result.success, true, `${c.name}: ${result.error}`);
              const expectedLines = c.expected(L, B, I, finalNewline).map((
                [t, b],
              ): Line => [I === "    " ? t.replaceAll("\t", I) : t, b]);
              const expected = build(expectedLines, bom, finalNewline);
              const actual = await Deno.readFile(path);
              assert.equal(show(actual), show(expected), c.name);
              assert.deepEqual(actual, expected, c.name);
              const undo = await call({ command: "undo_edit", path });
              assert.equal(undo.success, true, `${c.name} undo: ${undo.error}`);
              assert.deepEqual(await Deno.readFile(path), original, `${c.name} undo`);
            }
          });
        });
      }
    }
  }
}

Deno.test("golden: the view shows lines without CRs and with tabs as they are", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeFile(path, build([["a\tb", "\r\n"], ["\tc", "\n"]], true, true));
    const result = await call({ command: "view", path });
    assert.equal(
      result.output,
      `Here's the result of running \`cat -n\` on ${path}:\n     1\ta\tb\n     2\t\tc\n`,
    );
  });
});

Deno.test("golden: a lone CR inside a line is content, kept and matched as such", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "progress 10%\rprogress 20%\r\nnext\r\n");
    const result = await call({
      command: "str_replace",
      path,
      old_str: "next",
      new_str: "after\nthat",
    });
    assert.equal(result.success, true, result.error ?? "");
    assert.equal(await Deno.readTextFile(path), "progress 10%\rprogress 20%\r\nafter\r\nthat\r\n");
  });
});
