/**
 * The code graph at kernel scale (issue 51, Deliver 3), each figure a ratio to `ctags -R` or
 * `grep -rlw` measured in the same run, on Linux's own source: Debian's `linux-source-6.1`
 * package, unpacked by this bench (a subset of it, named in the output) into a folder under the
 * temp dir keyed by the package's version, so reruns reuse it.
 *
 * Every Deft figure is one `deft` process started as a user starts it (`deno task deft`'s flags,
 * the default sandbox), its CPU time (user + system) and peak resident memory taken from the
 * kernel's accounting of the whole process tree (python3's `getrusage(RUSAGE_CHILDREN)`):
 * - the full index (`deft ckg index`, empty cache): CPU <= 5x ctags -R's, peak RSS <=
 *   max(2x ctags', 256 MiB);
 * - the first answer on an empty cache (`deft ckg search-function`), for a name used all over the
 *   tree and for one defined in the largest C file: wall time <= 1x ctags -R;
 * - a miss (a name in no file), cold (empty cache) and warm (complete index): <= 1.5x grep -rlw;
 * - a warm query as the ckg tool runs it (a long-lived graph, its watcher vouching): <= 5 ms.
 *
 * Usage: `deno run -A bench/ckg_kernel_bench.ts [--subset kernel,fs,mm,net,drivers/net]
 * [--rounds N] [--against DIR]` (`deno task bench --only scale` runs it with the default subset).
 * `--against DIR` measures the misses of the Deft checkout in DIR too, in the same rounds (a
 * before and after); `--misses-only --index-cache CACHE` prints only the miss figures, on the
 * complete index an earlier `deft ckg index` left in the cache folder CACHE.
 */
import process from "node:process";
import { CodeGraph } from "../src/ckg/graph.ts";
import type { SearchCommand } from "../src/ckg/search.ts";
import type { GraphStore as GraphStoreType } from "../src/ckg/store.ts";
import { median, ms } from "./timing.ts";
import { type Checkout, missFigures } from "./ckg_miss.ts";

const PACKAGE = "linux-source-6.1";
const TARBALL = `/usr/src/${PACKAGE}.tar.xz`;
/** 200+ MB of C: the core kernel, file systems, memory, networking and network drivers. */
const DEFAULT_SUBSET = ["kernel", "fs", "mm", "net", "drivers/net"];
/** A name no file of the tree holds. */
const MISSING = "deft_bench_absent_name";
/**
 * A function defined in kernel/rcu/ (tree.c, and tiny.c for small systems) and called from some 190
 * other files. (`schedule`, called from more, is found too since the parser sees the kernel's
 * attribute macros blanked, `asmlinkage __visible void __sched`; this name stays so that runs
 * compare.)
 */
const POPULAR = "synchronize_rcu";
const TARGET_INDEX_CPU = 5;
const TARGET_RSS_FLOOR_MIB = 256;
const TARGET_FIRST = 1;
const TARGET_QUERY_MS = 5;
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const DENO_JSON = new URL("../deno.json", import.meta.url).pathname;

/** Wall and CPU time and peak RSS of one command's process tree. */
export interface Usage {
  wallMs: number;
  cpuMs: number;
  maxRssMiB: number;
  code: number;
  stdout: string;
}

/** Runs the benchmark and prints its lines. */
export default async function ckgKernelBench(args: string[]): Promise<void> {
  const at = args.indexOf("--subset");
  const subset = at >= 0 ? args[at + 1].split(",").filter((s) => s !== "") : DEFAULT_SUBSET;
  const version = await packageVersion();
  if (version === undefined) {
    console.log(
      `ckg-kernel: skipped: Linux's source is not installed (${TARBALL}); on Debian 12 ` +
        `run \`sudo apt-get install -y ${PACKAGE}\` and run the bench again`,
    );
    return;
  }
  const root = await unpacked(version, subset);
  const { files, bytes } = sourceSize(root);
  const work = await Deno.makeTempDir({ prefix: "deft-ckg-kernel-run-" });
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const against = flag("--against");
  const checkouts: Checkout[] = [
    { label: against ? "this checkout" : "deft", main: MAIN },
    ...(against ? [{ label: against, main: `${against}/main.ts` }] : []),
  ];
  const misses = (indexCache: string) =>
    missFigures({
      root,
      name: MISSING,
      indexCache,
      work,
      checkouts,
      rounds: Number(flag("--rounds") ?? 5),
      denoFlags: deftFlags(),
      measure,
    });
  try {
    if (args.includes("--misses-only")) {
      const cache = flag("--index-cache");
      if (!cache) throw new Error("--misses-only needs --index-cache CACHE (a complete index)");
      console.log(
        `ckg-kernel: ${PACKAGE} ${version}, subset ${subset.join(" ")} (${root}): ` +
          `${files.toLocaleString("en-US")} C files, ${(bytes / 1e6).toFixed(1)} MB`,
      );
      await misses(cache);
      return;
    }
    console.log(
      `ckg-kernel: ${PACKAGE} ${version}, subset ${subset.join(" ")} (${root}): ` +
        `${files.toLocaleString("en-US")} C files, ${(bytes / 1e6).toFixed(1)} MB; ` +
        `${navigator.hardwareConcurrency} cores, load ${loadAverage()}`,
    );
    // ctags first: its run also brings the whole tree into the page cache for everything after.
    const ctags = await measure(["ctags", "-R", "-f", `${work}/tags`, root]);
    if (ctags.code !== 0) {
      console.log("ckg-kernel: skipped: `ctags -R` failed (is universal-ctags installed?)");
      return;
    }
    const greps: Usage[] = [];
    for (let i = 0; i < 3; i++) greps.push(await measure(["grep", "-rlw", MISSING, root]));
    const grepMs = median(greps.map((run) => run.wallMs));
    console.log(
      `ckg-kernel: ctags -R: ${secs(ctags.wallMs)} wall, ${secs(ctags.cpuMs)} CPU, ` +
        `${ctags.maxRssMiB.toFixed(0)} MiB peak; grep -rlw (a miss): ${ms(grepMs)} (median of 3)`,
    );

    const largest = largestFileFunction(root, `${work}/tags`);
    let caches = 0;
    const cache = () => `${work}/cache-${caches++}`;
    for (const [label, name] of [["a name used all over", POPULAR], largest]) {
      const first = await deft(["ckg", "search-function", name, "-w", root, "--no-body"], cache());
      const found = /Found (\d+)/.exec(first.stdout)?.[1] ?? "0";
      console.log(
        `ckg-kernel: first answer, empty cache, ${label} (${name}, ${found} found): ` +
          `${secs(first.wallMs)}, ${secs(first.cpuMs)} CPU, ${first.maxRssMiB.toFixed(0)} MiB; ` +
          `/ ctags -R = ${verdict(first.wallMs / ctags.wallMs, TARGET_FIRST)}`,
      );
    }
    const indexCache = cache();
    const index = await deft(["ckg", "index", root, "-w", root], indexCache);
    if (index.code !== 0) throw new Error(`deft ckg index failed: ${index.stdout.slice(-400)}`);
    const rssLimit = Math.max(2 * ctags.maxRssMiB, TARGET_RSS_FLOOR_MIB);
    const dbBytes = [...Deno.readDirSync(`${indexCache}/ckg`)]
      .reduce((sum, e) => sum + Deno.statSync(`${indexCache}/ckg/${e.name}`).size, 0);
    console.log(
      `ckg-kernel: full index (deft ckg index, empty cache): ${secs(index.wallMs)} wall ` +
        `(${(index.wallMs / ctags.wallMs).toFixed(2)}x ctags), ${secs(index.cpuMs)} CPU / ctags ` +
        `= ${verdict(index.cpuMs / ctags.cpuMs, TARGET_INDEX_CPU)}; peak ` +
        `${index.maxRssMiB.toFixed(0)} MiB / max(2x ctags, ${TARGET_RSS_FLOOR_MIB} MiB) = ` +
        `${verdict(index.maxRssMiB / rssLimit, 1)}; database ${(dbBytes / 1e6).toFixed(0)} MB ` +
        `(${(dbBytes / bytes).toFixed(2)}x the source)`,
    );

    const warmHits: number[] = [];
    for (let i = 0; i < 3; i++) {
      const hit = await deft(
        ["ckg", "search-function", POPULAR, "-w", root, "--no-body"],
        indexCache,
      );
      warmHits.push(hit.wallMs);
    }
    console.log(
      `ckg-kernel: warm (complete index), one deft ckg process each, median of 3: hit ` +
        `(${POPULAR}) ${ms(median(warmHits))}`,
    );
    await misses(indexCache);
    await warmQueries(root, `${indexCache}/ckg`);
    await indexBreakdown(root, ctags.cpuMs, bytes, index.cpuMs);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

/** The installed package's version, when its tarball is there. */
async function packageVersion(): Promise<string | undefined> {
  try {
    Deno.statSync(TARBALL);
  } catch {
    return undefined;
  }
  try {
    const out = await new Deno.Command("dpkg-query", {
      args: ["-W", "-f", "${Version}", PACKAGE],
      stdout: "piped",
      stderr: "null",
    }).output();
    const version = new TextDecoder().decode(out.stdout).trim();
    if (out.success && version !== "") return version;
  } catch {
    // not Debian: name the cache after the tarball's size and mtime
  }
  const info = Deno.statSync(TARBALL);
  return `${info.size}-${info.mtime?.getTime() ?? 0}`;
}

/**
 * The subset unpacked under `<temp>/deft-ckg-kernel-<version>`, reused when a marker says an
 * earlier run finished unpacking it; mtimes in the past keep the indexer's racy re-check away.
 */
async function unpacked(version: string, subset: string[]): Promise<string> {
  const temp = Deno.env.get("TMPDIR") ?? "/tmp";
  const base = `${temp}/deft-ckg-kernel-${version.replace(/[^A-Za-z0-9.+-]/g, "_")}`;
  const root = `${base}/${PACKAGE}`;
  const marker = `${base}/.unpacked-${subset.join("+").replaceAll("/", "_")}`;
  try {
    Deno.statSync(marker);
    return root;
  } catch {
    // not yet
  }
  Deno.mkdirSync(base, { recursive: true });
  console.log(`ckg-kernel: unpacking ${subset.join(" ")} from ${TARBALL} into ${base} (once)`);
  const out = await new Deno.Command("tar", {
    args: ["-xJf", TARBALL, "-C", base, ...subset.map((dir) => `${PACKAGE}/${dir}`)],
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`unpacking ${TARBALL} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  Deno.writeTextFileSync(marker, new Date().toISOString());
  return root;
}

/** C sources (.c, .h) under `root`: how many and their bytes. */
function sourceSize(root: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.isFile && /\.[ch]$/.test(entry.name)) {
        files++;
        bytes += Deno.statSync(path).size;
      }
    }
  };
  walk(root);
  return { files, bytes };
}

/** A function ctags found in the largest `.c` file of the tree: what a worst-case first answer parses. */
function largestFileFunction(root: string, tags: string): [string, string] {
  const byFile = new Map<string, string>();
  for (const line of Deno.readTextFileSync(tags).split("\n")) {
    if (line.startsWith("!")) continue;
    const [name, file] = line.split("\t", 2);
    if (!file?.endsWith(".c") || byFile.has(file) || !/\tf(\t|$)/.test(line)) continue;
    if (/^[A-Za-z_]\w{5,}$/.test(name)) byFile.set(file, name);
  }
  let best = "";
  let bestSize = -1;
  for (const file of byFile.keys()) {
    const size = Deno.statSync(file.startsWith("/") ? file : `${root}/${file}`).size;
    if (size > bestSize) [best, bestSize] = [file, size];
  }
  const shown = best.startsWith(root) ? best.slice(root.length + 1) : best;
  return [
    `a function of the largest C file (${shown}, ${(bestSize / 1e6).toFixed(1)} MB)`,
    byFile
      .get(best)!,
  ];
}

/** The flags `deno task deft` starts Deft with, as a user runs it. */
function deftFlags(): string[] {
  const task = (JSON.parse(Deno.readTextFileSync(DENO_JSON)) as { tasks: { deft: string } })
    .tasks.deft;
  return task.split(/\s+/).filter((word) => word.startsWith("--"));
}

/** One `deft` process (Deft's cache in `cache`), measured. */
function deft(args: string[], cache: string): Promise<Usage> {
  return measure([Deno.execPath(), "run", ...deftFlags(), MAIN, ...args], {
    DEFT_CACHE_DIR: cache,
  });
}

const RUSAGE = `
import json, resource, subprocess, sys, time
start = time.monotonic()
child = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.buffer.write(child.stdout)
print(json.dumps({"wallMs": wall * 1000, "cpuMs": (usage.ru_utime + usage.ru_stime) * 1000,
                  "maxRssMiB": usage.ru_maxrss / 1024, "code": child.returncode}))
`;

/**
 * Runs `argv` under python3, which reports the kernel's accounting of the whole process tree once
 * it ends: CPU (user + system) and the peak resident set of its largest process.
 */
export async function measure(argv: string[], env: Record<string, string> = {}): Promise<Usage> {
  const out = await new Deno.Command("python3", {
    args: ["-c", RUSAGE, ...argv],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`measuring ${argv[0]} failed: ${text}`);
  const usage = JSON.parse(text) as Omit<Usage, "stdout">;
  return { ...usage, stdout: new TextDecoder().decode(out.stderr) };
}

/**
 * Queries as the ckg tool runs them: one long-lived graph that watches the tree, so an unchanged
 * tree is not walked; then the database lookup alone.
 */
async function warmQueries(root: string, ckgDir: string): Promise<void> {
  const graph = CodeGraph.open(root, { ckgDir, watch: true });
  try {
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(graph.databasePath, { readOnly: true });
    const names = db.prepare(
      "SELECT DISTINCT name FROM symbols WHERE kind = 'function' ORDER BY random() LIMIT 200",
    ).all().map((row) => (row as { name: string }).name);
    db.close();
    const command: SearchCommand = "search_function";
    await graph.search(command, POPULAR, root, { body: false });
    await graph.search(command, POPULAR, root, { body: false }); // starts the watcher
    const tool: number[] = [];
    const lookup: number[] = [];
    for (const name of names) {
      let start = performance.now();
      await graph.search(command, name, root, { body: true });
      tool.push(performance.now() - start);
      start = performance.now();
      await graph.lookup(command, name, root, { body: true });
      lookup.push(performance.now() - start);
    }
    const how = graph.watching ? "its watcher vouching nothing changed" : "NO WATCHER";
    console.log(
      `ckg-kernel: warm query as the ckg tool runs it (${names.length} names, bodies, ${how}): ` +
        `median ${ms(median(tool))} (target <= ${TARGET_QUERY_MS} ms)` +
        (median(tool) <= TARGET_QUERY_MS ? "" : " MISSED") +
        `; the database lookup alone ${ms(median(lookup))}`,
    );
  } finally {
    graph.close();
  }
}

/** CPU milliseconds per phase of indexing, added up over the sampled files. */
interface Phases {
  read: number;
  parse: number;
  captures: number;
  reparse: number;
  extract: number;
  store: number;
}

/**
 * Where a full index's CPU goes: every 16th C file (by path order) taken through the indexer's own
 * steps in this thread, each step's CPU scaled to the whole tree by bytes. Reading (and hashing,
 * decoding); parsing once (with the C attribute macros blanked) and running the definitions
 * query over the tree ("captures"): together the floor under any index built on these parsers;
 * parsing again to recover the definitions of files with syntax errors ("re-parse"); extracting
 * symbols and references; storing them (a fresh database, the indexer's batches). What the full
 * index (`indexCpuMs`, all threads) spends beyond their sum is the pipeline around them: workers
 * starting, text and captures crossing to and from them, garbage collection.
 */
export async function indexBreakdown(
  root: string,
  ctagsCpuMs: number,
  treeBytes: number,
  indexCpuMs?: number,
): Promise<Phases> {
  const { captureInProcess, loadGrammar } = await import("../src/ckg/runtime.ts");
  const { contentHash, decodeSource } = await import("../src/ckg/content.ts");
  const { extractRefs, extractSymbols, recoverDefinitions } = await import(
    "../src/ckg/parse_kit.ts"
  );
  const { GraphStore } = await import("../src/ckg/store.ts");
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of [...Deno.readDirSync(dir)].sort((a, b) => a.name < b.name ? -1 : 1)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.isFile && /\.[ch]$/.test(entry.name)) files.push(path);
    }
  };
  walk(root);
  const sample = files.filter((_, i) => i % 16 === 0);
  await loadGrammar("c");
  await captureInProcess("c", "int x;", 10_000);
  const phases: Phases = { read: 0, parse: 0, captures: 0, reparse: 0, extract: 0, store: 0 };
  // Each step over all sampled files at once, its CPU read before and after; a step that holds
  // two (parse and query, extraction and re-parsing) is split by the wall time of each part.
  const cpu = () => {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1000;
  };
  let at = cpu();
  const read = [];
  for (const path of sample) {
    const bytes = Deno.readFileSync(path);
    read.push({
      path,
      size: bytes.length,
      hash: await contentHash(bytes),
      text: decodeSource(bytes),
    });
  }
  phases.read = cpu() - at;
  const sampled = read.reduce((sum, file) => sum + file.text.length, 0);
  const first = { parseMs: 0, queryMs: 0 };
  at = cpu();
  const parsed = [];
  for (const file of read) parsed.push(await captureInProcess("c", file.text, 60_000, first));
  const parseCpu = cpu() - at;
  phases.parse = parseCpu * first.parseMs / (first.parseMs + first.queryMs);
  phases.captures = parseCpu - phases.parse;
  const again = { parseMs: 0, queryMs: 0 };
  let errors = 0;
  let recovered = 0;
  const parse = async (texts: string[]) => {
    recovered += texts.length;
    const outcomes = [];
    for (const piece of texts) outcomes.push(await captureInProcess("c", piece, 60_000, again));
    return outcomes;
  };
  const kept: Parameters<GraphStoreType["putFile"]>[] = [];
  at = cpu();
  const wall = performance.now();
  for (const [i, file] of read.entries()) {
    const outcome = parsed[i];
    if (!outcome.ok) continue;
    let found;
    if (outcome.result.hasError) {
      errors++;
      found = await recoverDefinitions("c", file.text, outcome.result, parse);
    } else {
      const symbols = extractSymbols("c", file.text, outcome.result);
      found = { hasError: false, symbols, refs: extractRefs(file.text, outcome.result, symbols) };
    }
    const record = {
      path: file.path.slice(root.length + 1),
      language: "c",
      size: file.size,
      mtimeMs: 0,
      hash: file.hash,
      status: "indexed" as const,
      note: null,
      hasErrors: found.hasError,
      racy: false,
    };
    kept.push([record, found.symbols, found.refs]);
  }
  const extractCpu = cpu() - at;
  phases.reparse = extractCpu * (again.parseMs + again.queryMs) / (performance.now() - wall);
  phases.extract = extractCpu - phases.reparse;
  const dir = await Deno.makeTempDir({ prefix: "deft-ckg-kernel-store-" });
  try {
    const store = GraphStore.open(`${dir}/graph.db`, root);
    const at = cpu();
    // As a first index of a large tree stores: the refs indexes built at the end.
    store.suspendRefIndexes();
    for (let i = 0; i < kept.length; i += 256) {
      store.transaction(() => {
        for (const args of kept.slice(i, i + 256)) store.putFile(...args);
      });
    }
    store.restoreRefIndexes();
    phases.store = cpu() - at;
    store.close();
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const scale = treeBytes / sampled;
  for (const key of Object.keys(phases) as (keyof Phases)[]) phases[key] *= scale;
  const part = (label: string, ms: number) =>
    `${label} ${secs(ms)} (${(ms / ctagsCpuMs).toFixed(2)}x)`;
  const floor = phases.parse + phases.captures;
  const sum = Object.values(phases).reduce((a, b) => a + b, 0);
  console.log(
    `ckg-kernel: where the index's CPU goes (one thread, every 16th file, scaled by bytes; ` +
      `x = / ctags -R's CPU): ${part("parse", phases.parse)} + ` +
      `${part("captures", phases.captures)} = the parse floor ${secs(floor)} = ` +
      `${(floor / ctagsCpuMs).toFixed(2)}x; above it: ${
        part(
          `re-parse (${errors} of ${sample.length} files with syntax errors; ${recovered} texts parsed again)`,
          phases.reparse,
        )
      }, ${part("extract", phases.extract)}, ${part("store", phases.store)}, ` +
      `${part("read+hash", phases.read)}; sum ${secs(sum)} = ${(sum / ctagsCpuMs).toFixed(2)}x` +
      (indexCpuMs === undefined
        ? ""
        : `; the full index's other CPU (workers, messages, GC, start) ${
          part("", indexCpuMs - sum).trim()
        }`),
  );
  return phases;
}

function verdict(ratio: number, target: number): string {
  return `${ratio.toFixed(2)}x (target <= ${target}x)${ratio <= target ? "" : " MISSED"}`;
}

function secs(value: number): string {
  return `${(value / 1000).toFixed(2)} s`;
}

function loadAverage(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
  } catch {
    return "unknown";
  }
}

if (import.meta.main) await ckgKernelBench(Deno.args);
