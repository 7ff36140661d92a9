/**
 * Legacy encodings, end to end: one fixture per encoding (made here with iconv-lite from known
 * text) is viewed, edited with `str_replace` and `insert`, and undone, and every result is compared
 * byte for byte with an encoding of the expected text, and decoded again by the platform's own
 * (WHATWG) decoder as an independent check.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import iconv from "iconv-lite";
import { detectEncoding } from "../../../src/tools/edit/encoding.ts";
import { withEditor } from "../../helpers/editor.ts";

interface Case {
  /** The encoding the fixture is written in (an iconv-lite name). */
  encoding: string;
  /** Names the editor may report for it (equivalent readings of these bytes). */
  accepted: string[];
  text: string;
  oldStr: string;
  newStr: string;
  /** Inserted after line 2. */
  inserted: string;
  bom?: Uint8Array;
  /** The WHATWG label to cross-check with, when it differs from `encoding`. */
  whatwg?: string;
}

const CODE = (comment: string, tail: string) =>
  `// ${comment}\nfunction sum(a, b) {\n  return a + b; // ${tail}\n}\n`;
const PY = (comment: string, tail: string) =>
  `# ${comment}\ndef total(a, b):\n    return a + b  # ${tail}\n`;

const CASES: Case[] = [
  {
    encoding: "gbk",
    accepted: ["gbk"],
    text: CODE("中文注释：计算总和", "返回结果"),
    oldStr: "返回结果",
    newStr: "返回两数之和",
    inserted: "  // 新增的一行\n",
  },
  {
    encoding: "gb18030",
    accepted: ["gb18030"],
    text: CODE("中文注释：计算总和 𠀀", "返回结果"),
    oldStr: "返回结果",
    newStr: "返回 😀 结果",
    inserted: "  // 新增 𠀁\n",
  },
  {
    encoding: "big5",
    accepted: ["big5"],
    text: CODE("繁體中文註解：計算總和", "傳回結果"),
    oldStr: "傳回結果",
    newStr: "傳回兩數之和",
    inserted: "  // 新增一行\n",
  },
  {
    encoding: "shift_jis",
    accepted: ["shift_jis", "cp932"],
    text: CODE("日本語のコメント：合計を計算する", "結果を返す"),
    oldStr: "結果を返す",
    newStr: "合計を返します",
    inserted: "  // 追加された行\n",
  },
  {
    encoding: "euc-jp",
    accepted: ["euc-jp"],
    text: CODE("日本語のコメント：合計を計算する", "結果を返す"),
    oldStr: "結果を返す",
    newStr: "合計を返します",
    inserted: "  // 追加された行\n",
  },
  {
    encoding: "euc-kr",
    accepted: ["euc-kr", "cp949"],
    text: CODE("한국어 주석: 합계를 계산합니다", "결과를 반환합니다"),
    oldStr: "결과를 반환합니다",
    newStr: "합계를 돌려줍니다",
    inserted: "  // 추가된 줄\n",
  },
  {
    encoding: "windows-1250",
    accepted: ["windows-1250"],
    text: PY("Komentář: spočítáme součet čísel", "vrátíme výsledek"),
    oldStr: "vrátíme výsledek",
    newStr: "vrátíme součet",
    inserted: "    # přidaný řádek\n",
  },
  {
    encoding: "windows-1251",
    accepted: ["windows-1251"],
    text: PY("Комментарий: вычисляем сумму чисел", "возвращаем результат"),
    oldStr: "возвращаем результат",
    newStr: "возвращаем сумму",
    inserted: "    # добавленная строка\n",
  },
  {
    encoding: "windows-1252",
    accepted: ["windows-1252"],
    text: "# Café naïve – 5 € “ok”: déjà vu\nprint('garçon')\nprint('fin')\n",
    oldStr: "garçon",
    newStr: "façade – €",
    inserted: "# crème brûlée\n",
  },
  {
    encoding: "koi8-r",
    accepted: ["koi8-r", "koi8-u"],
    text: PY("Комментарий: вычисляем сумму чисел", "возвращаем результат"),
    oldStr: "возвращаем результат",
    newStr: "возвращаем сумму",
    inserted: "    # добавленная строка\n",
  },
  {
    encoding: "iso-8859-5",
    accepted: ["iso-8859-5"],
    text: PY("Комментарий: вычисляем сумму чисел", "возвращаем результат"),
    oldStr: "возвращаем результат",
    newStr: "возвращаем сумму",
    inserted: "    # добавленная строка\n",
  },
  {
    encoding: "iso-8859-7",
    // The Greek letters used here have the same bytes in both.
    accepted: ["iso-8859-7", "windows-1253"],
    text: PY("Σχόλιο: υπολογίζουμε το άθροισμα", "επιστρέφουμε"),
    oldStr: "επιστρέφουμε",
    newStr: "επιστρέφουμε το άθροισμα",
    inserted: "    # νέα γραμμή\n",
  },
  {
    encoding: "iso-8859-1",
    // Windows-1252 is a superset of the printable Latin-1.
    accepted: ["windows-1252"],
    text: "# Größe: Übergröße für Bäume\nx = 'Straße'\ny = 1\n",
    oldStr: "Straße",
    newStr: "Füße",
    inserted: "# öäü\n",
  },
  {
    encoding: "utf-16le",
    accepted: ["utf-16le"],
    bom: Uint8Array.of(0xff, 0xfe),
    text: "hello мир 中文\r\nline two\r\nline three\r\n",
    oldStr: "line two",
    newStr: "линия два ✓ 😀",
    inserted: "inserted Ċ line\n",
  },
  {
    encoding: "utf-16be",
    accepted: ["utf-16be"],
    bom: Uint8Array.of(0xfe, 0xff),
    text: "hello мир 中文\nline two\nline three\n",
    oldStr: "line two",
    newStr: "линия два ✓",
    inserted: "inserted line\n",
  },
  {
    encoding: "utf-16be",
    accepted: ["utf-16be"],
    text: "no byte-order mark, big end\nline two\nline three\n",
    oldStr: "line two",
    newStr: "ligne deux, été",
    inserted: "inserted\n",
  },
  {
    encoding: "utf-16le",
    accepted: ["utf-16le"],
    text: "no byte-order mark\nline two\nline three\n",
    oldStr: "line two",
    newStr: "zweite Zeile ÄÖÜ",
    inserted: "inserted\n",
  },
];

function encoded(c: Case, text: string): Uint8Array {
  const body = new Uint8Array(iconv.encode(text, c.encoding));
  if (!c.bom) return body;
  const out = new Uint8Array(c.bom.length + body.length);
  out.set(c.bom);
  out.set(body, c.bom.length);
  return out;
}

// The platform's decoder, independent of iconv-lite: the bytes really hold `expected`.
function assertDecodesTo(c: Case, bytes: Uint8Array, expected: string): void {
  const label = c.encoding === "iso-8859-1" ? "windows-1252" : c.whatwg ?? c.encoding;
  const text = new TextDecoder(label, { fatal: true }).decode(bytes);
  assert.equal(text, expected, `${c.encoding}: decoded by the platform`);
}

function withCrlf(text: string, like: string): string {
  return like.includes("\r\n") ? text.replaceAll("\n", "\r\n") : text;
}

Deno.test("legacy encodings: golden matrix of view, str_replace, insert and undo", async () => {
  await withEditor(async ({ ws, call }) => {
    for (const [i, c] of CASES.entries()) {
      const label = `${c.encoding}${c.bom ? " with BOM" : ""}`;
      const path = join(ws, `f${i}.txt`);
      const original = encoded(c, c.text);
      await Deno.writeFile(path, original);

      const view = await call({ command: "view", path });
      assert.equal(view.success, true, `${label}: ${view.error}`);
      const lines = c.text.split(/\r?\n/).slice(0, -1);
      for (const [n, line] of lines.entries()) {
        assert.ok(view.output!.includes(`${String(n + 1).padStart(6)}\t${line}\n`), label);
      }
      const named = view.output!.match(/This file is encoded in (\S+?)[ ,]/);
      assert.ok(named && c.accepted.includes(named[1]), `${label}: ${view.output}`);
      assert.doesNotMatch(view.output!, /uncertain/, label);
      const ranged = await call({ command: "view", path, view_range: [2, 2] });
      assert.equal(ranged.success, true, `${label}: ${ranged.error}`);
      assert.ok(ranged.output!.includes(`     2\t${lines[1]}\n`), `${label}: ${ranged.output}`);
      assert.ok(!ranged.output!.includes(`     1\t`), label);

      const replaced = c.text.replace(c.oldStr, c.newStr);
      const edit = await call({
        command: "str_replace",
        path,
        old_str: c.oldStr,
        new_str: c.newStr,
      });
      assert.equal(edit.success, true, `${label}: ${edit.error}`);
      assert.ok(edit.output!.includes(c.newStr), label);
      const afterReplace = await Deno.readFile(path);
      assert.deepEqual(afterReplace, encoded(c, replaced), `${label}: str_replace bytes`);
      assertDecodesTo(c, afterReplace.subarray(c.bom?.length ?? 0), replaced);

      const cut = replaced.split("\n").slice(0, 2).join("\n").length + 1;
      const inserted = replaced.slice(0, cut) + withCrlf(c.inserted, c.text) + replaced.slice(cut);
      const ins = await call({ command: "insert", path, insert_line: 2, new_str: c.inserted });
      assert.equal(ins.success, true, `${label}: ${ins.error}`);
      const afterInsert = await Deno.readFile(path);
      assert.deepEqual(afterInsert, encoded(c, inserted), `${label}: insert bytes`);
      assertDecodesTo(c, afterInsert.subarray(c.bom?.length ?? 0), inserted);

      for (const step of ["insert", "str_replace"]) {
        const undo = await call({ command: "undo_edit", path });
        assert.equal(undo.success, true, `${label}: undo ${step}: ${undo.error}`);
      }
      assert.deepEqual(await Deno.readFile(path), original, `${label}: undo restores the bytes`);
    }
  });
});

Deno.test("legacy encodings: a character GBK lacks is refused by name and nothing changes", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "gbk.c");
    const original = new Uint8Array(iconv.encode(CODE("中文注释：计算总和", "返回结果"), "gbk"));
    await Deno.writeFile(path, original);
    const r = await call({ command: "str_replace", path, old_str: "返回结果", new_str: "返回 😀" });
    assert.equal(r.success, false);
    assert.match(r.error!, /"😀" \(U\+1F600\), which .* cannot hold \(it is encoded in gbk\)/);
    const ins = await call({ command: "insert", path, insert_line: 1, new_str: "// ✓ 𠀀" });
    assert.match(ins.error!, /U\+2713.*gbk/);
    assert.deepEqual(await Deno.readFile(path), original);
  });
});

Deno.test("legacy encodings: a short Cyrillic word is never shown as confident mojibake", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "short.py");
    const original = new Uint8Array(iconv.encode('answer = "да"\n', "windows-1251"));
    await Deno.writeFile(path, original);
    const view = await call({ command: "view", path });
    assert.equal(view.success, true, view.error ?? "");
    const right = view.output!.includes('answer = "да"') &&
      view.output!.includes("encoded in windows-1251");
    const flagged = /encoding of this file is uncertain/.test(view.output!);
    assert.ok(right || flagged, view.output!);
    if (!right) {
      // An edit of the word itself depends on the reading: it waits for the caller to say which
      // reading is right. (A plain ASCII edit, the same bytes in every reading, would be made.)
      const edit = await call({
        command: "str_replace",
        path,
        old_str: '"да"',
        new_str: '"нет"',
      });
      assert.match(edit.error!, /encoding of .* is uncertain .* repeat the edit with `encoding`/);
      assert.deepEqual(await Deno.readFile(path), original);
    }
    const stated = await call({ command: "view", path, encoding: "windows-1251" });
    assert.ok(stated.output!.includes('     1\tanswer = "да"\n'), stated.output!);
    const edit = await call({
      command: "str_replace",
      path,
      old_str: '"да"',
      new_str: '"нет"',
      encoding: "windows-1251",
    });
    assert.equal(edit.success, true, edit.error ?? "");
    assert.deepEqual(
      await Deno.readFile(path),
      new Uint8Array(iconv.encode('answer = "нет"\n', "windows-1251")),
    );
  });
});

Deno.test("legacy encodings: short texts are read right or flagged uncertain, never wrong", async () => {
  const samples: [string, string][] = [
    ["windows-1251", 'answer = "да"\n'],
    ["koi8-r", 'answer = "да"\n'],
    ["windows-1251", 'print("Привет")\n'],
    ["koi8-r", 'print("Привет")\n'],
    ["gbk", "x = '中文'\n"],
    ["big5", "x = '中文'\n"],
    ["shift_jis", "x = 'テスト'\n"],
    ["euc-kr", "x = '한국'\n"],
    ["windows-1250", "Łódź\n"],
    ["windows-1252", "naïve\n"],
    ["windows-1252", "Öl und Äpfel\n"],
  ];
  for (const [encoding, text] of samples) {
    const found = await detectEncoding(new Uint8Array(iconv.encode(text, encoding)));
    const label = `${encoding} ${JSON.stringify(text)}: ${JSON.stringify(found)}`;
    assert.ok(found.name === encoding || found.uncertain, `confidently wrong: ${label}`);
    if (found.uncertain) {
      assert.ok(
        found.name === encoding || found.uncertain.alternatives.includes(encoding),
        `the right reading is not even offered: ${label}`,
      );
    }
  }
});

Deno.test("legacy encodings: an uncertain ISO-8859-2 file is edited once its encoding is stated", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "pl.py");
    const text = PY("Komentarz: obliczamy sumę liczb, zażółć gęślą jaźń", "zwracamy wynik");
    const original = new Uint8Array(iconv.encode(text, "iso-8859-2"));
    await Deno.writeFile(path, original);
    const view = await call({ command: "view", path });
    if (/uncertain/.test(view.output!)) {
      assert.match(view.output!, /may also be/);
      const refused = await call({ command: "insert", path, insert_line: 0, new_str: "# ą" });
      assert.match(refused.error!, /uncertain/);
      assert.deepEqual(await Deno.readFile(path), original);
    }
    const r = await call({
      command: "str_replace",
      path,
      old_str: "zwracamy wynik",
      new_str: "zwracamy sumę — źle?",
      encoding: "ISO-8859-2",
    });
    // "—" is not in ISO-8859-2: refused by name.
    assert.match(r.error!, /U\+2014.*iso-8859-2/);
    const ok = await call({
      command: "str_replace",
      path,
      old_str: "zwracamy wynik",
      new_str: "zwracamy sumę, źle?",
      encoding: "ISO-8859-2",
    });
    assert.equal(ok.success, true, ok.error ?? "");
    assert.deepEqual(
      await Deno.readFile(path),
      new Uint8Array(iconv.encode(text.replace("zwracamy wynik", "zwracamy sumę, źle?"), "latin2")),
    );
    const wrong = await call({ command: "view", path, encoding: "no-such-encoding" });
    assert.match(wrong.error!, /"no-such-encoding" is not an encoding the editor can use/);
  });
});

Deno.test("legacy encodings: binary data with a UTF-16-like NUL pattern is still binary", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "table.bin");
    // Little-endian 16-bit numbers below 256: every other byte is zero, as in UTF-16 text.
    const bytes = Uint8Array.from({ length: 400 }, (_, i) => i % 2 === 0 ? (i * 7) % 32 + 1 : 0);
    await Deno.writeFile(path, bytes);
    const view = await call({ command: "view", path });
    assert.match(view.error!, /appears to be binary/);
  });
});

Deno.test("legacy encodings: create writes UTF-8 unless told otherwise", async () => {
  await withEditor(async ({ ws, call }) => {
    const plain = join(ws, "plain.txt");
    await call({ command: "create", path: plain, file_text: "中文\n" });
    assert.deepEqual(await Deno.readFile(plain), new TextEncoder().encode("中文\n"));
    const gbk = join(ws, "gbk.txt");
    const r = await call({ command: "create", path: gbk, file_text: "中文\n", encoding: "gbk" });
    assert.equal(r.success, true, r.error ?? "");
    assert.deepEqual(await Deno.readFile(gbk), new Uint8Array(iconv.encode("中文\n", "gbk")));
    const u16 = join(ws, "u16.txt");
    await call({ command: "create", path: u16, file_text: "hi\n", encoding: "utf-16le" });
    assert.deepEqual(await Deno.readFile(u16), Uint8Array.of(0xff, 0xfe, 0x68, 0, 0x69, 0, 10, 0));
    const bad = join(ws, "bad.txt");
    const refused = await call({ command: "create", path: bad, file_text: "😀", encoding: "gbk" });
    assert.match(refused.error!, /No file was created: .*U\+1F600.* gbk cannot represent/);
    await assert.rejects(Deno.stat(bad), Deno.errors.NotFound);
  });
});

// Three-line files whose one line of CJK text is too little for detection to be sure of.
const SHORT_FILES: { encoding: string; text: string; comment: string }[] = [
  { encoding: "gbk", text: "# 说明：数值\nvalue = 1\nprint(value)\n", comment: "# 说明：数值" },
  { encoding: "big5", text: "# 中文\nvalue = 1\nprint(value)\n", comment: "# 中文" },
  {
    encoding: "shift_jis",
    text: "# 説明：数値\nvalue = 1\nprint(value)\n",
    comment: "# 説明：数値",
  },
];

for (const { encoding, text, comment } of SHORT_FILES) {
  Deno.test(`legacy encodings: a three-line ${encoding} file of uncertain reading takes an ASCII edit byte for byte`, async () => {
    await withEditor(async ({ ws, call }) => {
      const path = join(ws, "short.py");
      const original = new Uint8Array(iconv.encode(text, encoding));
      const found = await detectEncoding(original);
      assert.ok(found.uncertain, `the case needs an uncertain reading: ${JSON.stringify(found)}`);
      await Deno.writeFile(path, original);
      const edit = await call({
        command: "str_replace",
        path,
        old_str: "value = 1",
        new_str: "value = 2",
      });
      assert.equal(edit.success, true, edit.error ?? "");
      const expected = new Uint8Array(
        iconv.encode(text.replace("value = 1", "value = 2"), encoding),
      );
      assert.deepEqual(await Deno.readFile(path), expected);
      // The uncertainty is still said, with what it means for this edit.
      assert.match(
        edit.output!,
        /encoding of this file is uncertain: it was read as .*same bytes/s,
      );
      assert.ok(edit.output!.includes("     2\tvalue = 2\n"), edit.output!);
      const undo = await call({ command: "undo_edit", path });
      assert.equal(undo.success, true, undo.error ?? "");
      assert.deepEqual(await Deno.readFile(path), original);
    });
  });

  Deno.test(`legacy encodings: a three-line ${encoding} file refuses edits whose bytes differ between readings`, async () => {
    await withEditor(async ({ ws, call }) => {
      const path = join(ws, "short.py");
      const original = new Uint8Array(iconv.encode(text, encoding));
      await Deno.writeFile(path, original);
      const refusal =
        /encoding of .* is uncertain .* not the same bytes under each .* repeat the edit with `encoding`/s;
      // New text in the file's own script: its bytes depend on the encoding.
      const added = await call({
        command: "str_replace",
        path,
        old_str: "value = 1",
        new_str: `value = 1  ${comment}`,
      });
      assert.match(added.error ?? "", refusal);
      // A sign every reading has, at a different byte in each.
      const degrees = await call({
        command: "str_replace",
        path,
        old_str: "value = 1",
        new_str: "value = 1  # 90°",
      });
      assert.match(degrees.error ?? "", refusal);
      // The non-ASCII line as the chosen reading shows it: other readings have other text there.
      const view = await call({ command: "view", path });
      const shownComment = view.output!.match(/ {5}1\t(.*)\n/)![1];
      const changed = await call({
        command: "str_replace",
        path,
        old_str: shownComment,
        new_str: "# plain",
      });
      assert.match(changed.error ?? "", /encoding of .* is uncertain/);
      assert.deepEqual(await Deno.readFile(path), original);
      // Stated, the same edits are made in that encoding.
      const stated = await call({
        command: "str_replace",
        path,
        old_str: "value = 1",
        new_str: `value = 1  ${comment}`,
        encoding,
      });
      assert.equal(stated.success, true, stated.error ?? "");
      assert.deepEqual(
        await Deno.readFile(path),
        new Uint8Array(iconv.encode(text.replace("value = 1", `value = 1  ${comment}`), encoding)),
      );
    });
  });
}

Deno.test("legacy encodings: an ASCII match one reading sees inside a two-byte character is refused", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "table.py");
    // "表" is 0x95 0x5C in Shift_JIS: its second byte reads as "\" in single-byte encodings.
    const text = "# 表示\nvalue = 1\nprint(value)\n";
    const original = new Uint8Array(iconv.encode(text, "shift_jis"));
    const found = await detectEncoding(original);
    const readings = [found.name, ...found.uncertain?.alternatives ?? []];
    assert.ok(
      readings.includes("shift_jis") && readings.some((r) => r.startsWith("windows-")),
      `the case needs both kinds of reading: ${JSON.stringify(found)}`,
    );
    await Deno.writeFile(path, original);
    const r = await call({ command: "str_replace", path, old_str: "\\", new_str: "/" });
    assert.match(r.error ?? "", /encoding of .* is uncertain/);
    assert.deepEqual(await Deno.readFile(path), original);
  });
});
