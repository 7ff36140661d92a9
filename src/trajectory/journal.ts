/**
 * The journal of a trajectory being written: one JSON line per change since the document was last
 * written whole, appended beside it (`<file>.journal`). A step costs what the step holds, not what
 * the run holds so far: the recorder masks and appends only the new step, and writes the whole
 * document (Trae Agent's shape) at the first record and when the run ends, folding the journal in.
 * A crash leaves the document and its journal; every reader folds them (`foldJournal`), losing at
 * most the line being written when the process died.
 *
 * The document names the journal it goes with (`journal_id`), and the journal's first line names
 * the document generation it extends: a journal left behind by a crash between the final write
 * and its removal belongs to an older generation and is never folded in twice.
 */

/** What the journal needs of a trajectory document (recorder.ts declares the whole shape). */
export interface JournalDoc {
  llm_interactions: unknown[];
  agent_steps: { step_number: number; lakeview?: unknown }[];
  total_usage: unknown;
  /** What the user did between the model's steps (recorder.ts's `SessionEvent`), in order. */
  events?: unknown[];
}

/** One journal line. */
export type JournalEntry =
  | { base: string }
  | { interaction: unknown; total_usage: unknown }
  | { step: { step_number: number } }
  | { annotate: { step_number: number; lakeview: unknown } }
  | { event: unknown }
  | { header: Record<string, unknown> };

/** Where the journal of the trajectory at `path` is kept. */
export function journalPath(path: string): string {
  return `${path}.journal`;
}

/** An append-only journal file, written with whole lines. */
export class JournalWriter {
  readonly #file: Deno.FsFile;
  readonly #encoder = new TextEncoder();

  /** Starts the journal of `path`'s document generation `id` (an older journal is replaced). */
  constructor(path: string, id: string) {
    this.#file = Deno.openSync(journalPath(path), {
      write: true,
      create: true,
      truncate: true,
      mode: 0o600,
    });
    this.append({ base: id });
  }

  /** Appends one entry as one line. */
  append(entry: JournalEntry): void {
    const bytes = this.#encoder.encode(JSON.stringify(entry) + "\n");
    let written = 0;
    while (written < bytes.length) written += this.#file.writeSync(bytes.subarray(written));
  }

  /** Closes the file; `remove` deletes it too (its content is in the document now). */
  close(path: string, remove: boolean): void {
    try {
      this.#file.close();
    } catch {
      // Closed already.
    }
    if (remove) {
      try {
        Deno.removeSync(journalPath(path));
      } catch {
        // Gone already; a leftover is of an older generation and never folded in.
      }
    }
  }
}

/**
 * `doc` with the journal `text` folded in, when the journal extends this generation of the
 * document (`journal_id`); `doc` unchanged otherwise. A last line cut short (the write a crash
 * interrupted) and anything after it is left out.
 */
export function foldJournal<T extends JournalDoc>(doc: T, text: string): T {
  const id = (doc as { journal_id?: unknown }).journal_id;
  if (typeof id !== "string") return doc;
  const lines = text.split("\n");
  let first: JournalEntry;
  try {
    first = JSON.parse(lines[0]);
  } catch {
    return doc;
  }
  if (!("base" in first) || first.base !== id) return doc;
  for (const line of lines.slice(1)) {
    if (line === "") continue;
    let entry: JournalEntry;
    try {
      entry = JSON.parse(line);
    } catch {
      break;
    }
    apply(doc, entry);
  }
  return doc;
}

function apply(doc: JournalDoc, entry: JournalEntry): void {
  if ("interaction" in entry) {
    doc.llm_interactions.push(entry.interaction);
    doc.total_usage = entry.total_usage;
  } else if ("step" in entry) {
    doc.agent_steps.push(entry.step as JournalDoc["agent_steps"][number]);
  } else if ("annotate" in entry) {
    const step = doc.agent_steps.find((s) => s.step_number === entry.annotate.step_number);
    if (step) step.lakeview = entry.annotate.lakeview;
  } else if ("event" in entry) {
    (doc.events ??= []).push(entry.event);
  } else if ("header" in entry) {
    Object.assign(doc, entry.header);
  }
}

/**
 * The header of `data`: everything but the interactions, the steps and the events (each appended
 * on its own, so a long session's header does not carry them again with every step).
 */
export function headerOf<T extends JournalDoc>(
  data: T,
): Omit<T, "llm_interactions" | "agent_steps" | "events"> {
  const { llm_interactions: _i, agent_steps: _s, events: _e, ...header } = data;
  return header;
}
