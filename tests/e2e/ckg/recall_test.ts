/**
 * Recall against Universal Ctags on real code present at test time: the Python standard library,
 * and the TypeScript sources and compiled JavaScript of the SDK packages under node_modules.
 * Every function, class and method ctags finds must be in the graph (same file, same name), bar
 * entries whose cause is ctags' own reading; every disagreement is listed with its cause.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { CodeGraph } from "../../../src/ckg/graph.ts";
import { tempDir } from "../../helpers/ckg.ts";
import { definitionNeedle } from "../../../src/ckg/prefilter.ts";
import { pythonStdlib, requireCtags, requireDirs } from "../../helpers/inputs.ts";

const SDK = "node_modules/.deno";

interface Corpus {
  name: string;
  /** Source folder and the files (relative paths, by extension) to copy; all when no limit. */
  dir: string;
  ext: RegExp;
  maxFiles?: number;
  /** ctags arguments choosing the language and its definition kinds. */
  ctags: string[];
}

// Asked of python3 when the test runs; a missing one fails it.
const PYTHON_STDLIB = "<python3's standard library>";

const CORPORA: Corpus[] = [
  {
    name: "Python standard library",
    dir: PYTHON_STDLIB,
    ext: /\.py$/,
    ctags: ["--languages=Python", "--kinds-Python=cfm"],
  },
  {
    name: "TypeScript of the Anthropic SDK",
    dir: `${SDK}/@anthropic-ai+sdk@1.15.0/node_modules/@anthropic-ai/sdk/src`,
    ext: /\.ts$/,
    maxFiles: 250,
    ctags: ["--languages=TypeScript", "--kinds-TypeScript=cfmigG"],
  },
  {
    name: "JavaScript of the OpenAI SDK",
    dir: `${SDK}/openai@7.59.0/node_modules/openai`,
    ext: /^(?!src\/).*\.js$/,
    maxFiles: 250,
    ctags: ["--languages=JavaScript", "--kinds-JavaScript=cfmgGS"],
  },
];

/** Why ctags reports a definition the graph does not hold, when the cause is ctags' reading. */
function ctagsCause(name: string, kind: string, line: string): string | undefined {
  if (kind === "class" && new RegExp(`(?:^|[^\\w$])${escape(name)}\\s*[:=]\\s*\\{`).test(line)) {
    return "ctags calls an object literal a class";
  }
  if (/\.prototype\.[\w$]+\.(?:call|apply)\(/.test(line)) {
    return "ctags reads `X.prototype.m.call/apply(...)` as defining X and m";
  }
  if (/^(?:if|for|while|switch|catch|override|return|get|set|static)$/.test(name)) {
    return "ctags takes a keyword for a method name";
  }
  if (name.startsWith("[")) return "ctags names a computed key by its expression";
  if (new RegExp(`^\\s*(?:exports\\.)?${escape(name)}\\.prototype\\s*=`).test(line)) {
    return "ctags reads a prototype assignment as a class";
  }
  if (new RegExp(`${escape(name)}\\[[^\\]]+\\]\\s*=`).test(line)) {
    return "ctags names a function stored under a computed key by its object";
  }
  return undefined;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function copySources(corpus: Corpus, to: string): Promise<number> {
  const found: string[] = [];
  const walk = async (dir: string, rel: string) => {
    const entries: Deno.DirEntry[] = [];
    for await (const e of Deno.readDir(dir)) entries.push(e);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const path = `${rel}${e.name}`;
      if (e.isDirectory && !e.name.startsWith(".") && e.name !== "__pycache__") {
        await walk(`${dir}/${e.name}`, `${path}/`);
      } else if (e.isFile && corpus.ext.test(path)) found.push(path);
    }
  };
  await walk(corpus.dir, "");
  const files = found.slice(0, corpus.maxFiles ?? found.length);
  for (const path of files) {
    // Numbered top folder: folder names the graph skips by policy (dist, build) stay searchable.
    const target = `${to}/${path}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    await Deno.copyFile(`${corpus.dir}/${path}`, target);
  }
  return files.length;
}

for (const listed of CORPORA) {
  Deno.test(`recall: ${listed.name} against Universal Ctags`, async () => {
    requireCtags();
    const corpus = listed.dir === PYTHON_STDLIB ? { ...listed, dir: pythonStdlib() } : listed;
    requireDirs([corpus.dir], "run `deno install` for the SDK packages under node_modules");
    await using ws = await tempDir();
    await using cache = await tempDir("deft-ckg-cache-");
    // Copied so the folder holds nothing but the sources compared (and no name is skipped).
    const files = await copySources(corpus, `${ws.path}/tree`);
    const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, answerFirst: false });
    let have: Set<string>;
    try {
      await graph.refresh();
      const db = new DatabaseSync(graph.databasePath, { readOnly: true });
      have = new Set(
        (db.prepare(
          "SELECT f.path || char(9) || s.name AS key FROM symbols s JOIN files f ON f.id = s.file_id",
        ).all() as { key: string }[]).map((row) => row.key),
      );
      db.close();
    } finally {
      graph.close();
    }
    // Answer first: every definition's file passes the byte filter a definition search uses.
    const bytes = new Map<string, Uint8Array>();
    for (const key of have) {
      const [path, name] = key.split("\t");
      if (!bytes.has(path)) bytes.set(path, await Deno.readFile(`${ws.path}/${path}`));
      assert.ok(definitionNeedle(name).test(bytes.get(path)!, path), `${path}: ${name} filtered`);
    }
    const out = await new Deno.Command("ctags", {
      args: ["-R", ...corpus.ctags, "--fields=+nK", "-f", "-", "tree"],
      cwd: ws.path,
      stdout: "piped",
    }).output();
    const texts = new Map<string, string[]>();
    const lineOf = async (path: string, line: number) => {
      if (!texts.has(path)) {
        texts.set(path, (await Deno.readTextFile(`${ws.path}/${path}`)).split("\n"));
      }
      return texts.get(path)![line - 1] ?? "";
    };
    let total = 0;
    const causes = new Map<string, string[]>();
    for (const entry of new TextDecoder().decode(out.stdout).split("\n")) {
      if (entry === "" || entry.startsWith("!")) continue;
      const fields = entry.split("\t");
      const [name, path] = fields;
      const kind = fields.find((f, i) => i >= 3 && !f.includes(":")) ?? "";
      const line = Number(fields.find((f) => f.startsWith("line:"))?.slice(5) ?? 0);
      // Names ctags invents for anonymous functions are not definitions anyone searches for.
      if (/^AnonymousFunction[0-9a-f]+$|^__anon[0-9a-f]+$/.test(name)) continue;
      total++;
      if (have.has(`${path}\t${name}`)) continue;
      const cause = ctagsCause(name, kind, await lineOf(path, line)) ?? "Deft misses it";
      if (!causes.has(cause)) causes.set(cause, []);
      causes.get(cause)!.push(`${path}:${line} ${kind} ${name.slice(0, 60)}`);
    }
    const missed = [...causes.values()].reduce((n, list) => n + list.length, 0);
    const deft = causes.get("Deft misses it")?.length ?? 0;
    const raw = 100 * (1 - missed / total);
    const fair = 100 * (1 - deft / (total - missed + deft));
    console.log(
      `${corpus.name}: ${files} files; ctags finds ${total} definitions; the graph holds ` +
        `${raw.toFixed(2)}% of them, ${fair.toFixed(2)}% leaving out ctags' own misreadings`,
    );
    for (const [cause, list] of causes) {
      console.log(`  ${list.length} × ${cause}: ${list.slice(0, 3).join("; ")}`);
    }
    assert.ok(total > 100, `ctags found only ${total} definitions`);
    assert.ok(fair >= 99, `recall ${fair.toFixed(2)}% < 99%`);
  });
}
