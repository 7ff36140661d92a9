/**
 * Parsing many files at once: on parser workers when there is enough work and workers can start,
 * otherwise in this thread.
 *
 * Workers are built from Blob URLs holding self-contained source (the web-tree-sitter library as
 * text, `captureDefinitions` and `parserWorker` below as text), because a worker module next to
 * this file does not exist once Deft is bundled into one JS file. Grammars travel as compiled
 * WebAssembly modules, whose code V8 shares between threads.
 */
import { captureDefinitions, type CaptureOutcome, type LoadedGrammar } from "./capture.ts";
import { grammarModule, libraryUrl, runtimeModule } from "./grammars.ts";
import { type GrammarId, LANGUAGES } from "./languages.ts";
import { captureInProcess } from "./runtime.ts";
import { parserWorkerPermissions, startWorker } from "../policy/workers.ts";

/** One file to parse. `id` is the caller's; results come back with it. */
export interface ParseJob {
  id: number;
  lang: GrammarId;
  text: string;
}

/** Something that parses jobs; results may arrive in any order. */
export interface Parsing {
  /** How parsing happens, for summaries: "on 2 parser workers", "in-process". */
  readonly description: string;
  run(jobs: readonly ParseJob[], onResult: (id: number, outcome: CaptureOutcome) => void): Promise<
    void
  >;
  close(): void;
}

/** Parses in this thread, one file after another. */
export class InProcessParsing implements Parsing {
  readonly description: string;

  constructor(readonly timeoutMs: number, note?: string) {
    this.description = note ? `in-process: ${note}` : "in-process";
  }

  async run(
    jobs: readonly ParseJob[],
    onResult: (id: number, outcome: CaptureOutcome) => void,
  ): Promise<void> {
    for (const job of jobs) {
      let outcome: CaptureOutcome;
      try {
        outcome = await captureInProcess(job.lang, job.text, this.timeoutMs);
      } catch (e) {
        outcome = { ok: false, error: e instanceof Error ? e.message : String(e) };
      }
      onResult(job.id, outcome);
    }
  }

  close(): void {}
}

interface WorkerSlot {
  worker: Worker;
  alive: boolean;
  /** Chunks posted to the worker and not yet answered, oldest first. */
  inFlight: Task[];
}

/** A chunk of jobs on its way to a worker, and what to do with its results. */
interface Task {
  jobs: readonly ParseJob[];
  onResult: (id: number, outcome: CaptureOutcome) => void;
  done: () => void;
}

/** Bytes of source per message to a worker: small enough to balance, large enough to batch. */
const CHUNK_BYTES = 192 * 1024;
const START_TIMEOUT_MS = 20_000;

let workerUrl: Promise<string> | undefined;

/** The Blob URL of the parser worker's source, built once per process. */
function parserWorkerUrl(): Promise<string> {
  workerUrl ??= (async () => {
    const library = await libraryUrl();
    const source = `(${parserWorker.toString()})(${
      JSON.stringify(library)
    }, (${captureDefinitions.toString()}));\n`;
    return URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  })();
  workerUrl.catch(() => workerUrl = undefined);
  return workerUrl;
}

/**
 * Parses on `count` workers that each hold the grammars of `languages`. Runs may overlap: their
 * chunks share one queue, so a caller can hand over files as it reads them.
 */
export class WorkerPool implements Parsing {
  readonly description: string;
  readonly #slots: WorkerSlot[];
  readonly #timeoutMs: number;
  readonly #languages: ReadonlySet<GrammarId>;
  readonly #queue: Task[] = [];
  #drainingHere = false;

  private constructor(slots: WorkerSlot[], timeoutMs: number, languages: readonly GrammarId[]) {
    this.#slots = slots;
    this.#timeoutMs = timeoutMs;
    this.#languages = new Set(languages);
    this.description = `on ${slots.length} parser worker${slots.length === 1 ? "" : "s"}`;
    for (const slot of slots) this.#listen(slot);
  }

  /** Starts the workers; rejects (after stopping any that started) when one cannot start. */
  static async start(
    count: number,
    languages: readonly GrammarId[],
    timeoutMs: number,
  ): Promise<WorkerPool> {
    const url = await parserWorkerUrl();
    const runtime = await runtimeModule();
    const grammars = await Promise.all(
      languages.map(async (id) => ({
        id,
        module: await grammarModule(id),
        query: LANGUAGES[id].query,
        macros: LANGUAGES[id].macros,
      })),
    );
    const slots: WorkerSlot[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const worker = startWorker(url, parserWorkerPermissions(), `deft-ckg-parser-${i}`);
        slots.push({ worker, alive: true, inFlight: [] });
      }
      await Promise.all(slots.map((slot) => initialise(slot.worker, runtime, grammars)));
    } catch (e) {
      for (const slot of slots) slot.worker.terminate();
      throw e;
    }
    return new WorkerPool(slots, timeoutMs, languages);
  }

  async run(
    jobs: readonly ParseJob[],
    onResult: (id: number, outcome: CaptureOutcome) => void,
  ): Promise<void> {
    const here = jobs.filter((job) => !this.#languages.has(job.lang));
    // Largest files first, so the last chunks to finish are small ones.
    const chunks = chunk(
      jobs.filter((job) => this.#languages.has(job.lang)).sort((a, b) =>
        b.text.length - a.text.length
      ),
    );
    const queued = new Promise<void>((resolve) => {
      let remaining = chunks.length;
      if (remaining === 0) resolve();
      const done = () => {
        if (--remaining === 0) resolve();
      };
      for (const jobs of chunks) this.#queue.push({ jobs, onResult, done });
    });
    this.#feedAll();
    await new InProcessParsing(this.#timeoutMs).run(here, onResult);
    await queued;
  }

  close(): void {
    for (const slot of this.#slots) {
      if (slot.alive) slot.worker.terminate();
      slot.alive = false;
    }
  }

  #feedAll(): void {
    for (const slot of this.#slots) this.#feed(slot);
    // Every worker died: finish here.
    if (!this.#slots.some((slot) => slot.alive)) this.#drainHere();
  }

  /** Keeps two chunks in flight, so a worker starts the next while this thread stores the last. */
  #feed(slot: WorkerSlot): void {
    while (slot.alive && slot.inFlight.length < 2 && this.#queue.length > 0) {
      const task = this.#queue.shift()!;
      slot.inFlight.push(task);
      slot.worker.postMessage({
        type: "parse",
        timeoutMs: this.#timeoutMs,
        jobs: task.jobs.map(({ id, lang, text }) => ({ id, lang, text })),
      });
    }
  }

  #listen(slot: WorkerSlot): void {
    slot.worker.onmessage = (event: MessageEvent) => {
      const task = slot.inFlight.shift();
      this.#feed(slot);
      if (!task) return;
      const message = event.data as WorkerReply;
      if (message.type === "parsed") {
        for (const { id, outcome } of message.results) task.onResult(id, outcome);
      } else {
        const error = message.type === "failed" ? message.error : "unexpected reply";
        for (const job of task.jobs) task.onResult(job.id, { ok: false, error });
      }
      task.done();
    };
    slot.worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      slot.alive = false;
      slot.worker.terminate();
      const error = `the parser worker stopped: ${event.message}`;
      for (const task of slot.inFlight.splice(0)) {
        for (const job of task.jobs) task.onResult(job.id, { ok: false, error });
        task.done();
      }
      this.#feedAll();
    };
  }

  /** Parses the queue in this thread, for when no worker is left. */
  async #drainHere(): Promise<void> {
    if (this.#drainingHere) return;
    this.#drainingHere = true;
    try {
      for (let task = this.#queue.shift(); task; task = this.#queue.shift()) {
        await new InProcessParsing(this.#timeoutMs).run(task.jobs, task.onResult);
        task.done();
      }
    } finally {
      this.#drainingHere = false;
    }
  }
}

function chunk(jobs: readonly ParseJob[]): ParseJob[][] {
  const chunks: ParseJob[][] = [];
  let current: ParseJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    current.push(job);
    bytes += job.text.length;
    if (bytes >= CHUNK_BYTES) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

type WorkerReply =
  | { type: "ready" }
  | { type: "failed"; error: string }
  | { type: "parsed"; results: { id: number; outcome: CaptureOutcome }[] };

function initialise(
  worker: Worker,
  runtime: WebAssembly.Module,
  grammars: { id: GrammarId; module: WebAssembly.Module; query: string; macros?: string }[],
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`a parser worker did not start within ${START_TIMEOUT_MS / 1000} s`)),
      START_TIMEOUT_MS,
    );
    worker.onmessage = (event: MessageEvent) => {
      clearTimeout(timer);
      const message = event.data as WorkerReply;
      if (message.type === "ready") resolve();
      else reject(new Error(message.type === "failed" ? message.error : "unexpected reply"));
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      clearTimeout(timer);
      reject(new Error(event.message));
    };
    worker.postMessage({ type: "init", runtime, grammars });
  });
}

/**
 * The worker's main function. It runs from source text inside a Blob worker: everything it uses
 * arrives as arguments or messages.
 */
function parserWorker(libraryUrl: string, capture: typeof captureDefinitions): void {
  const scope = self as unknown as {
    onmessage: ((event: MessageEvent) => void) | null;
    postMessage(message: unknown, transfer?: Transferable[]): void;
  };
  // deno-lint-ignore no-explicit-any
  let api: any;
  const grammars = new Map<string, LoadedGrammar>();
  let ready: Promise<void> | undefined;
  scope.onmessage = (event: MessageEvent) => {
    const message = event.data;
    if (message.type === "init") {
      ready = (async () => {
        // Seeing `process`, web-tree-sitter takes its Node.js path, which needs module
        // resolution that a Blob worker lacks; the browser-worker path needs nothing.
        try {
          delete (globalThis as { process?: unknown }).process;
        } catch {
          // not deletable: the library will cope or fail, and the pool falls back
        }
        api = await import(libraryUrl);
        const runtime: WebAssembly.Module = message.runtime;
        await api.Parser.init({
          instantiateWasm(
            imports: WebAssembly.Imports,
            done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
          ) {
            WebAssembly.instantiate(runtime, imports).then((instance) => done(instance, runtime));
            return {};
          },
          locateFile: (f: string) => f,
        });
        for (const grammar of message.grammars) {
          const language = api.Language.loadSync(grammar.module);
          grammars.set(grammar.id, {
            language,
            query: new api.Query(language, grammar.query),
            macros: grammar.macros === undefined ? undefined : new RegExp(grammar.macros, "g"),
          });
        }
      })();
      ready.then(
        () => scope.postMessage({ type: "ready" }),
        (e) => scope.postMessage({ type: "failed", error: String(e?.message ?? e) }),
      );
      return;
    }
    if (message.type === "parse") {
      (ready ?? Promise.reject(new Error("not initialised"))).then(() => {
        const results = [];
        const transfer: Transferable[] = [];
        for (const job of message.jobs) {
          const grammar = grammars.get(job.lang);
          const outcome: CaptureOutcome = grammar
            ? capture(api, grammar, job.text, message.timeoutMs)
            : { ok: false, error: `no grammar for ${job.lang}` };
          if (outcome.ok) transfer.push(outcome.result.data.buffer as ArrayBuffer);
          results.push({ id: job.id, outcome });
        }
        scope.postMessage({ type: "parsed", results }, transfer);
      }).catch((e) => scope.postMessage({ type: "failed", error: String(e?.message ?? e) }));
    }
  };
}
