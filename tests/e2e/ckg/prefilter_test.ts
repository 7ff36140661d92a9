/**
 * Answer first, index later: the byte prefilter never misses a file that holds a symbol or a
 * reference of the name, and a search answered from a partial index equals the answer of the
 * complete index — on real code present on this machine, in each language it has.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../../src/ckg/graph.ts";
import { definitionNeedle, needleFor, searchNeedle } from "../../../src/ckg/prefilter.ts";
import { isSourcePath } from "../../../src/ckg/languages.ts";
import type { SearchCommand } from "../../../src/ckg/search.ts";
import { formatSearchText } from "../../../src/ckg/format.ts";
import { formatEdgeText } from "../../../src/ckg/edge_format.ts";
import type { EdgeCommand } from "../../../src/ckg/edge_search.ts";
import { DatabaseSync } from "node:sqlite";
import { LANGS_DIR, tempDir } from "../../helpers/ckg.ts";
import { pythonStdlib, requireDirs } from "../../helpers/inputs.ts";

const encode = (s: string) => new TextEncoder().encode(s);

Deno.test("prefilter: a literal byte search at word boundaries", () => {
  const n = needleFor("urlparse");
  assert.equal(n.test(encode("x = urlparse(u)")), true);
  assert.equal(n.test(encode("urlparse")), true);
  assert.equal(n.test(encode("def urlparse_x(): pass\nmy_urlparse = 1")), false);
  assert.equal(n.test(encode("$urlparse urlparse2 urlparseé")), false);
  assert.equal(n.test(encode("a.urlparse.b")), true);
  assert.equal(n.test(encode("urlpars")), false);
  // A name that ends in punctuation needs no boundary on that side.
  assert.equal(needleFor("operator+").test(encode("Vec operator+=(x)")), true);
  assert.equal(searchNeedle("operator +").text, "operator");
  // Qualified method names filter on the member.
  assert.equal(searchNeedle("Cls.method").text, "method");
  assert.equal(searchNeedle("ns::Cls::method").text, "method");
  assert.equal(needleFor("").test(encode("anything")), false);
  assert.equal(needleFor("é").test(encode("café")), false, "non-ASCII bytes are word bytes");
  assert.equal(needleFor("naïve").test(encode("x = naïve()")), true);
});

Deno.test("prefilter: the byte search agrees with a check of every position, for short and long names", () => {
  // Bytes from a small alphabet, so names occur often, at edges, overlapping and next to word bytes.
  const alphabet = encode("ab_ (.aab\u00e9");
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const isWord = (b: number) => /[\w$]/.test(String.fromCharCode(b)) || b >= 0x80;
  const reference = (name: Uint8Array, bytes: Uint8Array) => {
    for (let at = 0; at + name.length <= bytes.length; at++) {
      if (!name.every((b, i) => bytes[at + i] === b)) continue;
      if (isWord(name[0]) && at > 0 && isWord(bytes[at - 1])) continue;
      const after = at + name.length;
      if (isWord(name[name.length - 1]) && after < bytes.length && isWord(bytes[after])) continue;
      return true;
    }
    return false;
  };
  const names = ["a", "ab", "aab", "abab", "ab_a", "aabab", "a(a", "baab_ab", "abababab", "_a.b"];
  let found = 0;
  for (let round = 0; round < 3000; round++) {
    const bytes = Uint8Array.from({ length: random(40) }, () => alphabet[random(alphabet.length)]);
    for (const name of names) {
      const want = reference(encode(name), bytes);
      if (want) found++;
      assert.equal(needleFor(name).test(bytes), want, `${name} in ${JSON.stringify(bytes)}`);
    }
  }
  assert.ok(found > 1000, `the inputs hold the names often enough to test matches (${found})`);
});

Deno.test("prefilter: in Python, a definition search parses only files where the name is defined", () => {
  const n = definitionNeedle("urlparse");
  const py = (s: string) => n.test(encode(s), "m.py");
  assert.equal(py("def urlparse(url):\n    pass\n"), true);
  assert.equal(py("async def  urlparse(url): pass"), true);
  assert.equal(py("class urlparse:\n    pass"), true);
  assert.equal(py("urlparse = lambda u: u"), true);
  assert.equal(py("class K:\n    urlparse: int = 3"), true);
  assert.equal(py("class K:\n    urlparse: int"), true);
  assert.equal(py("def \\\n  urlparse(): pass"), true, "a line continuation after def");
  assert.equal(py("urlparse \\\n = 1"), true, "a line continuation before =");
  assert.equal(py("from urllib.parse import urlparse\nx = urlparse(u)"), false);
  assert.equal(py("x.urlparse = 1"), true, "more files may pass, never fewer");
  // Other languages only need the word.
  assert.equal(n.test(encode("x = urlparse(u)"), "m.js"), true);
  assert.equal(n.test(encode("x = urlparse(u)")), true);
});

/** Real trees on this machine, one per language that has one, copied (sources only, up to `limit`). */
// Asked of python3 when a test runs; a missing one fails that test.
const PYTHON_STDLIB = "<python3's standard library>";

const TREES: { lang: string; dirs: string[]; limit: number; install: string }[] = [
  {
    lang: "python",
    install: "apt-get install python3",
    dirs: ["json", "http", "urllib", "email"].map((d) => `${PYTHON_STDLIB}/${d}`),
    limit: 600_000,
  },
  {
    lang: "typescript",
    install: "run `deno install`",
    dirs: ["node_modules/.deno/@anthropic-ai+sdk@1.15.0/node_modules/@anthropic-ai/sdk/src"],
    limit: 400_000,
  },
  {
    lang: "javascript",
    install: "run `deno install`",
    dirs: ["node_modules/.deno/yaml@2.9.1/node_modules/yaml/dist"],
    limit: 400_000,
  },
  {
    lang: "c",
    install: "apt-get install nettle-dev zlib1g-dev (.ci/run installs them)",
    dirs: ["/usr/share/doc/nettle-dev/examples", "/usr/share/doc/zlib1g-dev/examples"],
    limit: 400_000,
  },
  // No Java, Go, Rust or C++ code ships on this machine: the hand-written fixtures stand in.
  { lang: "java, go, rust, c++", dirs: [LANGS_DIR], limit: 400_000, install: "git checkout" },
];

async function copyTree(dirs: string[], to: string, limit: number): Promise<number> {
  let bytes = 0;
  let files = 0;
  const walk = async (dir: string, rel: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [];
      for await (const e of Deno.readDir(dir)) entries.push(e);
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (bytes >= limit) return;
      const abs = `${dir}/${e.name}`;
      const target = `${to}/${rel}${e.name}`;
      if (e.isDirectory && !e.name.startsWith(".") && e.name !== "__pycache__") {
        await walk(abs, `${rel}${e.name}/`);
      } else if (e.isFile && isSourcePath(e.name)) {
        const data = await Deno.readFile(abs);
        await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
        await Deno.writeFile(target, data);
        bytes += data.length;
        files++;
      }
    }
  };
  // Numbered top folders: a source folder named dist/ or build/ would be skipped by policy.
  for (const [i, dir] of dirs.entries()) await walk(dir, `tree${i}/`);
  return files;
}

/** Every distinct symbol and reference name in a database, with the files holding each. */
function namesIn(dbPath: string): Map<string, Set<string>> {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const rows = db.prepare(
      `SELECT s.name AS name, f.path AS path FROM symbols s JOIN files f ON f.id = s.file_id
       UNION SELECT r.name, f.path FROM refs r JOIN files f ON f.id = r.file_id
       UNION SELECT r.derived, f.path FROM refs r JOIN files f ON f.id = r.file_id
         WHERE r.derived IS NOT NULL`,
    ).all() as { name: string; path: string }[];
    const names = new Map<string, Set<string>>();
    for (const { name, path } of rows) {
      if (!names.has(name)) names.set(name, new Set());
      names.get(name)!.add(path);
    }
    return names;
  } finally {
    db.close();
  }
}

/** Every distinct definition name in a database, with the files defining it. */
function definitionsIn(dbPath: string, kind?: string): Map<string, Set<string>> {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const rows = db.prepare(
      `SELECT DISTINCT s.name AS name, f.path AS path FROM symbols s JOIN files f ON f.id = s.file_id
       WHERE ? IS NULL OR s.kind = ?`,
    ).all(kind ?? null, kind ?? null) as { name: string; path: string }[];
    const names = new Map<string, Set<string>>();
    for (const { name, path } of rows) {
      if (!names.has(name)) names.set(name, new Set());
      names.get(name)!.add(path);
    }
    return names;
  } finally {
    db.close();
  }
}

/** A deterministic sample of `n` items. */
function sample<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  let seed = 20;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, n);
}

const DEFINITIONS: SearchCommand[] = ["search_function", "search_class", "search_class_method"];
const EDGES: EdgeCommand[] = ["search_references", "search_callers", "search_subclasses"];

for (const tree of TREES) {
  Deno.test(`prefilter: ${tree.lang}: no name is missed, and 200 sampled answers equal the complete index's`, async () => {
    const ws = await tempDir();
    await using cacheFull = await tempDir("deft-ckg-cache-");
    await using cachePart = await tempDir("deft-ckg-cache-");
    try {
      const stdlib = tree.dirs.some((d) => d.startsWith(PYTHON_STDLIB)) ? pythonStdlib() : "";
      const dirs = tree.dirs.map((d) => d.replace(PYTHON_STDLIB, stdlib));
      requireDirs(dirs, tree.install);
      const files = await copyTree(dirs, ws.path, tree.limit);
      assert.ok(files > 0, `no source file in ${dirs.join(", ")}`);
      const full = CodeGraph.open(ws.path, { ckgDir: cacheFull.path, answerFirst: false });
      const partial = CodeGraph.open(ws.path, {
        ckgDir: cachePart.path,
        workers: 0,
        prefilterMinBytes: 0,
      });
      try {
        await full.refresh();
        // The property the prefilter rests on, for every name the complete index holds.
        const names = namesIn(full.databasePath);
        const bytes = new Map<string, Uint8Array>();
        for (const [name, paths] of names) {
          const needle = searchNeedle(name);
          for (const path of paths) {
            if (!bytes.has(path)) bytes.set(path, await Deno.readFile(`${ws.path}/${path}`));
            assert.ok(needle.test(bytes.get(path)!), `${path} holds ${name} but fails its filter`);
          }
        }
        for (const [name, paths] of definitionsIn(full.databasePath)) {
          const needle = definitionNeedle(name);
          for (const path of paths) {
            if (!bytes.has(path)) bytes.set(path, await Deno.readFile(`${ws.path}/${path}`));
            assert.ok(needle.test(bytes.get(path)!, path), `${path} defines ${name}; filter fails`);
          }
        }
        // A function search's filter (narrower in C: definitions, not calls) keeps every function.
        for (const [name, paths] of definitionsIn(full.databasePath, "function")) {
          const needle = definitionNeedle(name, "search_function");
          for (const path of paths) {
            assert.ok(
              needle.test(bytes.get(path)!, path),
              `${path} defines ${name}(); filter fails`,
            );
          }
        }
        // End to end: answers from a partial index (filled search by search) equal the full one.
        const symbolNames = [...names.keys()];
        const picked = sample(symbolNames, 200);
        let i = 0;
        for (const name of picked) {
          const edge = EDGES[i % EDGES.length];
          const options = { body: true, indirect: i % 2 === 0 };
          const want = await full.searchEdges(edge, name, undefined, options);
          const got = await partial.searchEdges(edge, name, undefined, options);
          assert.deepEqual(strip(got), strip(want), `${edge} ${name}`);
          const definition = DEFINITIONS[i % DEFINITIONS.length];
          const wantDef = await full.lookup(definition, name);
          if (wantDef.matches.length > 0) {
            // Only hits: a miss completes the index (close names need all of it).
            const gotDef = await partial.search(definition, name);
            assert.deepEqual(strip(gotDef), strip(wantDef), `${definition} ${name}`);
          }
          i++;
        }
        // A miss answered at once (no file holds the name) is a miss of the complete index too:
        // no definition and no use of it there either.
        for (const [j, name] of sample(symbolNames, 20).entries()) {
          const absent = `${name}_${j}zq`;
          const definition = DEFINITIONS[j % DEFINITIONS.length];
          const got = await partial.search(definition, absent);
          assert.deepEqual(got.matches, [], absent);
          if (got.absent) {
            assert.deepEqual((await full.lookup(definition, absent)).matches, [], absent);
            for (const edge of EDGES) {
              const want = await full.searchEdges(edge, absent, undefined, { body: false });
              assert.deepEqual(
                [...want.references, ...want.callers, ...want.subclasses],
                [],
                `${edge} ${absent}`,
              );
            }
          }
        }
        const totals = partial.totals();
        console.log(
          `${files} files, ${names.size} names; after ${picked.length} searches the partial ` +
            `index holds ${totals.indexed} of them`,
        );
      } finally {
        full.close();
        partial.close();
      }
    } finally {
      await ws.remove();
    }
  });
}

/** A result without database ids (two databases number rows differently). */
function strip(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(
      value,
      (key, v) =>
        // `absent` says how a miss was answered (at once, from the bytes), not what it is.
        key === "id" || key === "fileId" || key === "parentId" || key === "symbolId" ||
          key === "absent"
          ? undefined
          : v,
    ),
  );
}

Deno.test("prefilter: the rest of the index is built in the background, and searches in between stay right", async () => {
  const ws = await tempDir();
  const cache = await tempDir("deft-ckg-cache-");
  try {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) {
      files[`m${i}.py`] = `def f${i}():\n    return g${i + 1}()\n\nclass C${i}:\n    pass\n`;
    }
    for (const [path, text] of Object.entries(files)) {
      await Deno.writeTextFile(`${ws.path}/${path}`, text);
    }
    const graph = CodeGraph.open(ws.path, {
      ckgDir: cache.path,
      workers: 0,
      prefilterMinBytes: 0,
      background: true,
      backgroundSliceBytes: 600,
    });
    try {
      const first = await graph.search("search_function", "f7");
      assert.deepEqual(first.matches.map((m) => m.symbol.path), ["m7.py"]);
      assert.ok(graph.totals().indexed < 40, "answered before indexing everything");
      assert.ok(graph.indexing, "the rest is being indexed");
      // A search while the background runs: callers of g8 live in m7.py.
      const callers = await graph.searchEdges("search_callers", "g8", undefined, { body: false });
      assert.deepEqual(callers.callers.map((m) => m.symbol.name), ["f7"]);
      await graph.settled();
      assert.equal(graph.totals().indexed, 40);
      assert.equal(graph.indexing, false);
    } finally {
      graph.close();
    }
  } finally {
    await ws.remove();
    await cache.remove();
  }
});

Deno.test("prefilter: a miss no file holds is answered at once, without indexing, and says so", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  const files: Record<string, string> = {};
  for (let i = 0; i < 30; i++) files[`m${i}.py`] = `def f${i}():\n    return g${i}()\n`;
  files["n.c"] = "#define MAKE(x) void made_##x(void) {}\nMAKE(one)\n";
  for (const [path, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${ws.path}/${path}`, text);
  }
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0, prefilterMinBytes: 0 });
  try {
    // `made_one` exists only as the preprocessor builds it: no file holds those bytes.
    const miss = await graph.search("search_function", "made_one");
    assert.deepEqual(miss.matches, []);
    assert.deepEqual(miss.absent, { name: "made_one", scanned: 31 });
    assert.equal(graph.totals().indexed, 0, "nothing was parsed for a name no file holds");
    const text = formatSearchText(miss, false);
    assert.match(text, /^No functions named made_one found\.\nNothing under this path defines/);
    assert.match(text, /none of the 31 files not yet indexed holds its bytes/);
    assert.match(text, /preprocessor builds/);
    const callers = await graph.searchEdges("search_callers", "made_one", undefined, {
      body: false,
    });
    assert.deepEqual(callers.absent, { name: "made_one", scanned: 31 });
    assert.match(
      formatEdgeText(callers, false),
      /^No functions calling made_one found\.\nNothing under this path defines or uses made_one/,
    );
    assert.equal(graph.totals().indexed, 0);
    // A hit costs the same scan and parses only its file.
    const hit = await graph.search("search_function", "f7");
    assert.deepEqual(hit.matches.map((m) => m.symbol.path), ["m7.py"]);
    assert.equal(graph.totals().indexed, 1);
  } finally {
    graph.close();
  }
});

Deno.test("prefilter: a changed file without the name loses its old symbols instead of answering stale", async () => {
  const ws = await tempDir();
  const cache = await tempDir("deft-ckg-cache-");
  try {
    await Deno.writeTextFile(`${ws.path}/a.py`, "def target():\n    pass\n");
    await Deno.writeTextFile(`${ws.path}/b.py`, "def other():\n    target()\n");
    const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0, prefilterMinBytes: 0 });
    try {
      await graph.refresh();
      await Deno.writeTextFile(`${ws.path}/a.py`, "def renamed():\n    pass\n# longer now\n");
      await Deno.writeTextFile(`${ws.path}/b.py`, "def other():\n    return 1\n");
      const refs = await graph.searchEdges("search_references", "target", undefined, {
        body: false,
      });
      assert.deepEqual(refs.references, []);
      // No file holds `target` any more: the miss is answered at once and says so (issue 32).
      const miss = await graph.search("search_function", "target");
      assert.deepEqual(miss.matches, []);
      assert.deepEqual(miss.absent, { name: "target", scanned: 2 });
      // The miss of a definition search some file holds (here in a comment) completes the index,
      // so close names are offered.
      const held = await graph.search("search_function", "longer");
      assert.deepEqual(held.matches, []);
      assert.equal(held.absent, undefined);
      assert.equal(graph.totals().indexed, 2);
    } finally {
      graph.close();
    }
  } finally {
    await ws.remove();
    await cache.remove();
  }
});
