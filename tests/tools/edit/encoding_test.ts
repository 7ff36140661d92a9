/** Encodings: UTF-8, BOMs, Windows-1252 round trips, and files that must be refused. */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  decode,
  DecodeError,
  detectEncoding,
  encode,
  UnencodableError,
} from "../../../src/tools/edit/encoding.ts";
import { binaryReason } from "../../../src/tools/edit/binary.ts";
import { utf8, withEditor } from "../../helpers/editor.ts";

/** "café naïve – 5 € “ok”\n" in Windows-1252. */
const CP1252_TEXT = Uint8Array.of(
  ...utf8("caf"),
  0xe9,
  ...utf8(" na"),
  0xef,
  ...utf8("ve "),
  0x96,
  ...utf8(" 5 "),
  0x80,
  0x20,
  0x93,
  ...utf8("ok"),
  0x94,
  0x0a,
);

Deno.test("encoding: Windows-1252 decodes and encodes back to the same bytes", async () => {
  const enc = await detectEncoding(CP1252_TEXT);
  assert.deepEqual(enc, { name: "windows-1252", bomLength: 0 });
  const text = decode(CP1252_TEXT, enc.name);
  assert.equal(text, "café naïve – 5 € “ok”\n");
  assert.deepEqual(encode(text, "windows-1252"), CP1252_TEXT);
  // Every byte Windows-1252 defines survives the round trip.
  const all = Uint8Array.from({ length: 256 }, (_, i) => i)
    .filter((b) => ![0x81, 0x8d, 0x8f, 0x90, 0x9d].includes(b));
  assert.deepEqual(encode(decode(all, "windows-1252"), "windows-1252"), all);
});

Deno.test("encoding: characters Windows-1252 lacks are refused, never replaced", () => {
  assert.throws(() => encode("日本", "windows-1252"), UnencodableError);
  assert.throws(() => encode("a\u0081", "windows-1252"), /U\+0081/);
  assert.throws(() => encode("lone \ud800", "utf-8"), /U\+D800/);
  assert.deepEqual(encode("😀", "utf-8"), utf8("😀"));
});

Deno.test("encoding: detection of UTF-8, BOMs and files that cannot be decoded", async () => {
  assert.deepEqual(await detectEncoding(utf8("plain")), { name: "utf-8", bomLength: 0 });
  assert.deepEqual(await detectEncoding(Uint8Array.of(0xef, 0xbb, 0xbf, 0x61)), {
    name: "utf-8",
    bomLength: 3,
  });
  assert.deepEqual(await detectEncoding(Uint8Array.of(0xff, 0xfe, 0x61, 0x00)), {
    name: "utf-16le",
    bomLength: 2,
  });
  const cases: [string, Uint8Array, RegExp][] = [
    ["UTF-16, odd", Uint8Array.of(0xff, 0xfe, 0x61, 0x00, 0x62), /UTF-16LE .* odd number/],
    ["BOM + invalid", Uint8Array.of(0xef, 0xbb, 0xbf, 0xe9), /byte-order mark but is not valid/],
    ["broken UTF-8", Uint8Array.of(...utf8("héllo wörld "), 0xff, 0x0a), /mostly UTF-8/],
    ["undefined byte", Uint8Array.of(0x61, 0x81, 0x62), /neither UTF-8 nor text in a legacy/],
  ];
  for (const [name, bytes, message] of cases) {
    await assert.rejects(detectEncoding(bytes), (e: Error) => {
      assert.ok(e instanceof DecodeError, name);
      assert.match(e.message, message, name);
      return true;
    });
  }
});

Deno.test("binary detection: NUL bytes and control-character noise", () => {
  assert.equal(binaryReason(utf8("text\twith\ttabs\r\n\x1b[31mred\x1b[0m\f")), null);
  assert.equal(
    binaryReason(Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0)),
    "it contains NUL bytes",
  );
  assert.match(binaryReason(Uint8Array.of(1, 2, 3, 4, 5, 65, 66))!, /control characters/);
});

Deno.test("binary detection: a single NUL byte is found at any place of a large file", () => {
  // The check reads four bytes at a time: the byte must be found in each lane of a word, in the
  // unaligned head and tail, and where a high byte (0x80-0xFF) sits next to it.
  const size = 4099;
  const buffer = new Uint8Array(size + 3).fill(0xe9);
  for (let offset = 0; offset < 4; offset++) {
    const bytes = buffer.subarray(offset, offset + size);
    assert.equal(binaryReason(bytes), null);
    for (const at of [0, 1, 2, 3, 4, 5, 6, 7, 2048, 2049, 2050, 2051, size - 2, size - 1]) {
      bytes[at] = 0;
      assert.equal(binaryReason(bytes), "it contains NUL bytes", `offset ${offset}, at ${at}`);
      bytes[at] = at % 2 ? 0x01 : 0xff;
      assert.equal(binaryReason(bytes), null, `offset ${offset}, at ${at} after the NUL`);
      bytes[at] = 0xe9;
    }
  }
});

Deno.test("editor: a Latin-1 file is viewed decoded and edited in its own encoding", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "legacy.txt");
    await Deno.writeFile(path, CP1252_TEXT);
    const view = await call({ command: "view", path });
    assert.ok(view.output!.includes("     1\tcafé naïve – 5 € “ok”\n"));
    const edit = await call({ command: "str_replace", path, old_str: "naïve", new_str: "süß" });
    assert.equal(edit.success, true, edit.error ?? "");
    const expected = Uint8Array.of(
      ...utf8("caf"),
      0xe9,
      ...utf8(" s"),
      0xfc,
      0xdf,
      ...utf8(" "),
      0x96,
      ...utf8(" 5 "),
      0x80,
      0x20,
      0x93,
      ...utf8("ok"),
      0x94,
      0x0a,
    );
    assert.deepEqual(await Deno.readFile(path), expected);
    const ins = await call({ command: "insert", path, insert_line: 1, new_str: "€ fin" });
    assert.equal(ins.success, true);
    assert.deepEqual(
      await Deno.readFile(path),
      Uint8Array.of(...expected, 0x80, ...utf8(" fin\n")),
    );
    const bad = await call({ command: "str_replace", path, old_str: "fin", new_str: "終" });
    assert.match(
      bad.error!,
      /^No change was made: `new_str` contains the character "終" \(U\+7D42\), which .* cannot hold \(it is encoded in windows-1252\)/,
    );
    assert.deepEqual(
      await Deno.readFile(path),
      Uint8Array.of(...expected, 0x80, ...utf8(" fin\n")),
    );
    await call({ command: "undo_edit", path });
    await call({ command: "undo_edit", path });
    assert.deepEqual(await Deno.readFile(path), CP1252_TEXT);
  });
});

Deno.test("editor: UTF-8 multi-byte text keeps exact bytes around the edit", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "u.txt");
    const text = "日本語 😀 first\nzweite Zeile größer\nτρίτη\n";
    await Deno.writeTextFile(path, text);
    await call({ command: "str_replace", path, old_str: "größer", new_str: "kleiner 🙂" });
    assert.equal(await Deno.readTextFile(path), text.replace("größer", "kleiner 🙂"));
    const snippet = await call({ command: "insert", path, insert_line: 3, new_str: "ok" });
    assert.ok(snippet.output!.includes("     1\t日本語 😀 first\n"));
  });
});

Deno.test("editor: undecodable and binary files are refused for view and edit", async () => {
  await withEditor(async ({ ws, call }) => {
    const broken = join(ws, "broken.txt");
    await Deno.writeFile(broken, Uint8Array.of(...utf8("größe\n"), 0xff, ...utf8(" end\n")));
    const edit = await call({ command: "str_replace", path: broken, old_str: "end", new_str: "x" });
    assert.match(
      edit.error!,
      /^The file .* cannot be edited: it is mostly UTF-8 but contains invalid UTF-8 bytes \(the first at line 2, byte offset 8\)/,
    );
    const view = await call({ command: "view", path: broken });
    assert.match(view.error!, /cannot be shown: it is mostly UTF-8/);

    const utf16 = join(ws, "u16.txt");
    await Deno.writeFile(utf16, Uint8Array.of(0xff, 0xfe, 0x61, 0, 0x0a, 0, 0x62));
    assert.match((await call({ command: "view", path: utf16 })).error!, /UTF-16LE .* odd/);
    assert.match(
      (await call({ command: "insert", path: utf16, insert_line: 0, new_str: "x" })).error!,
      /UTF-16LE .* odd/,
    );

    const png = join(ws, "image.png");
    const bytes = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d);
    await Deno.writeFile(png, bytes);
    for (
      const args of [
        { command: "view", path: png },
        { command: "view", path: png, view_range: [1, 1] },
        { command: "str_replace", path: png, old_str: "PNG", new_str: "x" },
        { command: "insert", path: png, insert_line: 0, new_str: "x" },
      ]
    ) {
      const r = await call(args);
      assert.match(
        r.error!,
        /appears to be binary \(it contains NUL bytes\); the editor only views and edits text files/,
      );
    }
    assert.deepEqual(await Deno.readFile(png), bytes);
  });
});

Deno.test("editor: one NUL byte deep in a large text file still makes it binary", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "log.txt");
    const line = utf8("a line of text that goes on for a while, as log lines do\n");
    const bytes = new Uint8Array(line.length * 4001 + 1);
    for (let i = 0; i < 4001; i++) bytes.set(line, i * line.length);
    bytes[bytes.length - 1] = 0x0a;
    bytes[150_001] = 0; // far past the 8 KB sample
    await Deno.writeFile(path, bytes);
    for (
      const args of [
        { command: "view", path },
        { command: "str_replace", path, old_str: "a line", new_str: "one line" },
        { command: "insert", path, insert_line: 1, new_str: "x" },
      ]
    ) {
      const r = await call(args);
      assert.match(r.error ?? "", /appears to be binary \(it contains NUL bytes\)/, args.command);
    }
    assert.deepEqual(await Deno.readFile(path), bytes);
  });
});

Deno.test("editor: create refuses a lone surrogate instead of writing U+FFFD", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "s.txt");
    const r = await call({ command: "create", path, file_text: "bad \ud800 char" });
    assert.match(
      r.error!,
      /^No file was created: `file_text` contains the character .* \(U\+D800\)/,
    );
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
  });
});
