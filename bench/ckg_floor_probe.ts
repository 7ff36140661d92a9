/**
 * The floor under the one-shot `ckg` targets (see ckg_answer_bench.ts), run as its own process:
 * the least work any search must do when it is hosted like Deft's (the trust boundary of
 * docs/architecture.md: a worker fenced by Deno permissions), with none of Deft's own code around
 * it.
 *
 * - `warm TREE`: start a permission-fenced worker, load SQLite in it (`node:sqlite`, which brings
 *   up Deno's Node compatibility layer in that worker) and run one query, and stat every source
 *   file under TREE (an answer must follow the files as they are now). Then exit.
 * - `cold TREE FILE`: the same, plus reading every source file once (to find the ones holding the
 *   name), and tree-sitter's first parse of FILE: runtime, grammar and query set up, one parse.
 *
 * Usage: `deno run -A bench/ckg_floor_probe.ts warm|cold TREE [FILE]`
 */

const SOURCE = /\.(?:py|pyi|js|mjs|cjs|ts|tsx|java|c|h|cc|cpp|hpp|go|rs)$/;

interface Job {
  mode: "warm" | "cold";
  tree: string;
  file?: string;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.name.startsWith(".") || entry.name === "__pycache__") continue;
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) sourceFiles(path, out);
    else if (entry.isFile && SOURCE.test(entry.name)) out.push(path);
  }
  return out;
}

async function work(job: Job): Promise<void> {
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(":memory:");
  db.prepare("SELECT 1").get();
  db.close();
  const files = sourceFiles(job.tree);
  let bytes = 0;
  for (const file of files) bytes += Deno.lstatSync(file).size;
  if (job.mode === "warm" || !job.file) return;
  // One reused buffer, as Deft's prefilter reads.
  let buffer = new Uint8Array(1 << 20);
  for (const file of files) {
    using handle = Deno.openSync(file);
    for (let read: number | null = 0; read !== null; read = handle.readSync(buffer)) {
      bytes += read;
      if (read === buffer.length) buffer = new Uint8Array(buffer.length * 2);
    }
  }
  const [{ captureInProcess }, { languageFor }] = await Promise.all([
    import("../src/ckg/runtime.ts"),
    import("../src/ckg/languages.ts"),
  ]);
  const text = Deno.readTextFileSync(job.file);
  const lang = languageFor(job.file, text);
  if (!lang) throw new Error(`${job.file}: not a language tree-sitter parses here`);
  const outcome = await captureInProcess(lang, text, 30_000);
  if (!outcome.ok) throw new Error(outcome.error);
}

type Scope = { onmessage: ((e: MessageEvent<Job>) => void) | null; postMessage(m: unknown): void };

if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined") {
  const scope = globalThis as unknown as Scope;
  scope.onmessage = (e) => {
    work(e.data).then(
      () => scope.postMessage({ ok: true }),
      (error) => scope.postMessage({ ok: false, error: String(error) }),
    );
  };
} else if (import.meta.main) {
  const [mode, tree, file] = Deno.args;
  if ((mode !== "warm" && mode !== "cold") || !tree) {
    console.error("usage: ckg_floor_probe.ts warm|cold TREE [FILE]");
    Deno.exit(2);
  }
  const code = new URL("..", import.meta.url).pathname;
  const worker = new Worker(import.meta.url, {
    type: "module",
    deno: {
      permissions: {
        read: [tree, code],
        write: false,
        net: false,
        run: false,
        env: false,
        sys: false,
        ffi: false,
        import: false,
      },
    },
  } as WorkerOptions);
  const reply = await new Promise<{ ok: boolean; error?: string }>((resolve) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.postMessage({ mode, tree, file } satisfies Job);
  });
  worker.terminate();
  if (!reply.ok) {
    console.error(reply.error);
    Deno.exit(1);
  }
}
