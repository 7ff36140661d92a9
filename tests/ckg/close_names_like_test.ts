/**
 * The close-name scan looks for pieces of the name with `LIKE` (issue 51): it must return exactly
 * the rows the former `instr(lower(name), piece)` scan returned, also for names full of `%`, `_`
 * and `\` (LIKE's wildcards and its escape character) and for names outside ASCII, and a search
 * for such a name suggests the same close names as before.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { GraphStore } from "../../src/ckg/store.ts";
import { searchGraph } from "../../src/ckg/search.ts";
import type { ExtractedSymbol } from "../../src/ckg/extract.ts";
import { tempDir } from "../helpers/ckg.ts";

const KINDS = ["function", "class", "method"] as const;

/** The scan as it was before `LIKE`, the reference the new one must agree with. */
function formerNamesNear(db: DatabaseSync, name: string, slack: number): string[] {
  const lower = name.toLowerCase();
  const pieces = slack + 1;
  const size = Math.floor(lower.length / pieces);
  const cut = size >= 1
    ? Array.from(
      { length: pieces },
      (_, i) => lower.slice(i * size, i === pieces - 1 ? lower.length : (i + 1) * size),
    )
    : [];
  const holds = cut.length > 0
    ? ` AND (${cut.map(() => "instr(lower(s.name), ?) > 0").join(" OR ")})`
    : "";
  const longest = name.length + slack;
  const rows = db.prepare(
    `SELECT DISTINCT s.name AS name, s.kind AS kind FROM symbols s
     WHERE s.kind IN (?, ?, ?) AND ((length(s.name) BETWEEN ? AND ?${holds}) OR
     (length(s.name) > ? AND instr(lower(s.name), ?) > 0) OR
     length(CAST(s.name AS BLOB)) != length(s.name)) LIMIT 50000`,
  ).all(...KINDS, Math.max(1, name.length - slack), longest, ...cut, longest, lower) as {
    name: string;
    kind: string;
  }[];
  return rows.map((r) => `${r.kind} ${r.name}`).sort();
}

function symbol(name: string, kind: "function" | "class" | "method", i: number): ExtractedSymbol {
  return {
    kind,
    subkind: null,
    name,
    className: null,
    parentFunction: null,
    parent: -1,
    startLine: i + 1,
    endLine: i + 1,
    startOffset: i,
    endOffset: i + 1,
    signature: name,
  };
}

Deno.test("close names: the LIKE scan returns what the instr(lower()) scan did, for %, _, \\ and unicode", async () => {
  await using dir = await tempDir();
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  // LIKE's wildcards and escape, letters of both cases, and characters SQLite does not fold.
  const letters = "ab%_\\AB%_\\éÉß";
  const word = (length: number) =>
    Array.from({ length }, () => letters[random(letters.length)]).join("");
  const probes = [
    "%",
    "_",
    "\\",
    "a%b",
    "a_b",
    "a\\b",
    "__init__",
    "%%__\\\\",
    "100%_done",
    "ÉcoleNormale",
    "straße_name",
    // Past the longest LIKE pattern SQLite takes: looked for another way, with the same answer.
    "a_%".repeat(7000),
    // LIKE would read a pattern only up to the NUL.
    "ab\0%_",
    ...Array.from({ length: 60 }, () => word(1 + random(14))),
  ];
  const names = new Set<string>([
    "aXb",
    "a_b",
    "A_B",
    "a%b",
    "aab",
    "a\\b",
    "ab",
    "__init__",
    "xx__INIT__yy",
    "_xinitx_",
    "100%_done",
    "100X_done",
    "100%Xdone",
    "ÉCOLENORMALE",
    "écolenormale",
    "EcoleNormale",
    "STRASSE_NAME",
    `x${"A_%".repeat(7000)}`,
    "straße_name",
  ]);
  for (let i = 0; i < 3000; i++) names.add(word(1 + random(16)));
  const path = `${dir.path}/graph.db`;
  const store = GraphStore.open(path, "/nowhere");
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    store.putFile({
      path: "a.py",
      language: "python",
      size: 1,
      mtimeMs: 0,
      hash: "h",
      status: "indexed",
      note: null,
      hasErrors: false,
      racy: false,
    }, [...names].map((name, i) => symbol(name, KINDS[i % 3], i)));
    let compared = 0;
    for (const probe of probes) {
      for (const slack of [1, 2, 3]) {
        const got = store.namesNear(probe, KINDS, "", slack, 50_000)
          .map((r) => `${r.kind} ${r.name}`).sort();
        assert.deepEqual(
          got,
          formerNamesNear(db, probe, slack),
          `probe ${JSON.stringify(probe)}, slack ${slack}`,
        );
        compared += got.length;
      }
    }
    assert.ok(compared > 1000, `the fixture has close names to compare (${compared})`);
    // What a user sees: the wrong command's name first, then names a slip away.
    const result = await searchGraph(store, dir.path, "", "search_function", "100%_done", {
      body: false,
    });
    const offered = result.suggestions.map((s) => `${s.kind} ${s.name}`);
    assert.equal(offered[0], "class 100%_done", offered.join(", "));
    assert.ok(offered.includes("method 100X_done"), offered.join(", "));
  } finally {
    db.close();
    store.close();
  }
});
