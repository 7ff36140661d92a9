/** Which files are worth parsing, and how their bytes become text. */
import assert from "node:assert/strict";
import { contentHash, decodeSource, MAX_SOURCE_BYTES, skipReason } from "../../src/ckg/content.ts";
import {
  grammarsForPaths,
  headerLanguage,
  isSourcePath,
  languageFor,
} from "../../src/ckg/languages.ts";

const encode = (s: string) => new TextEncoder().encode(s);

Deno.test("content: ordinary source is parsed", () => {
  assert.equal(skipReason(encode("def f():\n    return 1\n".repeat(5000))), undefined);
});

Deno.test("content: minified code (very long lines) is skipped with the reason", () => {
  const minified = encode("function a(){return 1};".repeat(4000));
  assert.match(
    skipReason(minified) ?? "",
    /^minified or generated \(lines average \d+ characters\)$/,
  );
  // A small file with one long line is cheap to parse and may hold definitions.
  assert.equal(skipReason(encode("x".repeat(5000))), undefined);
});

Deno.test("content: binary and oversized files are skipped", () => {
  assert.equal(skipReason(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2])), "binary");
  assert.equal(skipReason(new Uint8Array(MAX_SOURCE_BYTES + 1).fill(10)), "larger than 16 MB");
});

Deno.test("content: invalid UTF-8 decodes with replacement characters, hashes by bytes", async () => {
  const bytes = new Uint8Array([...encode("# "), 0xff, 0xfe, ...encode("\ndef ok(): pass\n")]);
  assert.equal(decodeSource(bytes), "# \uFFFD\uFFFD\ndef ok(): pass\n");
  assert.equal(skipReason(bytes), undefined);
  assert.notEqual(await contentHash(bytes), await contentHash(encode("# ??\ndef ok(): pass\n")));
  assert.equal(await contentHash(bytes), await contentHash(bytes.slice()));
});

Deno.test("languages: extensions map to grammars; .h is C unless it holds C++", () => {
  assert.equal(languageFor("a/b.py", ""), "python");
  assert.equal(languageFor("x.JAVA", ""), "java");
  assert.equal(languageFor("x.jsx", ""), "javascript");
  assert.equal(languageFor("x.d.ts", ""), "typescript");
  assert.equal(languageFor("x.tsx", ""), "tsx");
  assert.equal(languageFor("x.cc", ""), "cpp");
  assert.equal(languageFor("x.txt", ""), undefined);
  assert.equal(languageFor("Makefile", ""), undefined);
  assert.equal(isSourcePath("dir.py/Makefile"), false);
  assert.equal(isSourcePath(".py"), false);
  assert.equal(headerLanguage("struct point { int x; };\nint add(int, int);\n"), "c");
  assert.equal(headerLanguage("namespace geo {\nclass Shape {};\n}\n"), "cpp");
  assert.equal(headerLanguage("struct S {\npublic:\n  int x;\n};\n"), "cpp");
  assert.deepEqual(grammarsForPaths(["a.h", "b.py"]).sort(), ["c", "cpp", "python"]);
});
