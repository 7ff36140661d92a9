/**
 * The timeline of a conversation, in the order things happened: the user's prompts, `!command`s,
 * `/undo`, `/rewind` and `/compact` between the model's steps, over every file the conversation
 * was recorded in (a /compact goes on in a new one). A step's time counts from what came just
 * before it, so the first step of a turn counts from the prompt, not from the end of the turn
 * before: the time the user took to type is not the model's. Files are data: what is not the
 * expected type is skipped, and every string reaches the page through escape.ts.
 */
import type {
  CompactionRecord,
  RecordedStep,
  RewindRecord,
  Trajectory,
} from "../trajectory/recorder.ts";
import { block, type BlockLimits, text } from "./escape.ts";

/** One file of a conversation. */
export interface ConversationPart {
  path: string;
  trajectory: Trajectory;
}

/** One entry of the timeline. */
export type TimelineItem =
  | { kind: "step"; step: RecordedStep; elapsed: number | null }
  | { kind: "prompt"; time: string | null; text: string }
  /** `sent`: not recorded on its own; found in the prompt it went with (run before the first). */
  | { kind: "shell"; time: string | null; command: string; output: string; sent?: true }
  | { kind: "undo"; time: string | null; said: string }
  | { kind: "rewind"; time: string | null; record: RewindRecord }
  | { kind: "compact"; time: string | null; record: CompactionRecord }
  | { kind: "part"; part: ConversationPart };

// What orders the timeline but is not shown: the end of a turn (its checkpoint). In a file without
// prompt events it means the next step's start is unknown.
type Placed = {
  at: number;
  time: number | null;
  seq: number;
  item: TimelineItem | { kind: "turn-end" };
};

function objects<T>(value: unknown): T[] {
  return Array.isArray(value) ? value.filter((v) => v !== null && typeof v === "object") : [];
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function time(value: unknown): number | null {
  const t = typeof value === "string" ? Date.parse(value) : NaN;
  return Number.isFinite(t) ? t : null;
}

/** The entries of every part, in order, each step with the seconds it took. */
export function timeline(parts: readonly ConversationPart[]): TimelineItem[] {
  const out: TimelineItem[] = [];
  parts.forEach((part, i) => {
    if (i > 0) out.push({ kind: "part", part });
    out.push(...partItems(part.trajectory));
  });
  return out;
}

function partItems(t: Trajectory): TimelineItem[] {
  const steps = objects<RecordedStep>(t.agent_steps);
  const stepTimes = steps.map((s) => time(s.timestamp));
  // Where an entry recorded only with its time goes: after the steps recorded by then.
  const byTime = (at: number | null) =>
    at === null ? steps.length : stepTimes.filter((s) => s !== null && s <= at).length;
  const placed: Placed[] = [];
  const place = (item: Placed["item"], when: unknown, at?: unknown) => {
    const ms = time(when);
    const n = typeof at === "number" && Number.isInteger(at) ? at : byTime(ms);
    placed.push({ at: Math.max(0, Math.min(steps.length, n)), time: ms, seq: placed.length, item });
  };
  const events = objects<Record<string, unknown>>(t.events);
  for (const e of events) {
    const when = str(e.time) ?? null;
    if (e.kind === "prompt" && str(e.text) !== undefined) {
      place({ kind: "prompt", time: when, text: str(e.text)! }, e.time, e.at_steps);
    } else if (e.kind === "shell" && str(e.command) !== undefined) {
      const output = str(e.output) ?? "";
      place({ kind: "shell", time: when, command: str(e.command)!, output }, e.time, e.at_steps);
    } else if (e.kind === "undo") {
      place({ kind: "undo", time: when, said: str(e.said) ?? "" }, e.time, e.at_steps);
    }
  }
  // A file without prompt events (older, or Trae Agent's): its task is the one prompt known.
  if (!events.some((e) => e.kind === "prompt")) {
    place({ kind: "prompt", time: str(t.start_time) ?? null, text: str(t.task) ?? "" }, null, 0);
  }
  for (const r of objects<RewindRecord>(t.rewinds)) {
    place({ kind: "rewind", time: str(r.time) ?? null, record: r }, r.time);
  }
  for (const c of objects<CompactionRecord>(t.compactions)) {
    place({ kind: "compact", time: str(c.time) ?? null, record: c }, c.time);
  }
  for (const c of objects<{ kind?: unknown; time?: unknown }>(t.checkpoints)) {
    if (c.kind === "turn") place({ kind: "turn-end" }, c.time);
  }
  placed.sort((a, b) =>
    a.at - b.at || (a.time ?? Infinity) - (b.time ?? Infinity) || a.seq - b.seq
  );
  const ordered: Placed["item"][] = [];
  let next = 0;
  steps.forEach((step, i) => {
    while (next < placed.length && placed[next].at <= i) ordered.push(placed[next++].item);
    ordered.push({ kind: "step", step, elapsed: null });
  });
  while (next < placed.length) ordered.push(placed[next++].item);
  return withElapsed(ordered, time(t.start_time), t);
}

/**
 * Each step's seconds: from the entry just before it (the step before, or the prompt that began
 * the turn). After a turn's end with no prompt recorded, the start is unknown and no time is shown.
 */
function withElapsed(
  ordered: Placed["item"][],
  start: number | null,
  t: Trajectory,
): TimelineItem[] {
  let since = start;
  const out: TimelineItem[] = [];
  const recorded = new Set<string>();
  for (const item of ordered) {
    if (item.kind === "turn-end") {
      since = null;
      continue;
    }
    if (item.kind === "step") {
      const at = time(item.step.timestamp);
      out.push({
        ...item,
        elapsed: at !== null && since !== null ? Math.max(0, (at - since) / 1000) : null,
      });
      since = at;
      continue;
    }
    if (item.kind === "prompt") {
      out.push(...sentWith(item, t, recorded));
      recorded.clear();
    }
    if (item.kind === "shell") recorded.add(item.command);
    out.push(item);
    since = item.kind === "part" ? since : time(item.time);
  }
  return out;
}

// The block a `!command` adds to the next prompt (src/cli/interactive/shell_line.ts): an intro line,
// `$ COMMAND`, what it printed, `(exit code N)`.
const SHELL_BLOCK =
  /<user-shell-command>\n[^\n]*\n\$ ([^\n]*)\n([\s\S]*?)\n?<\/user-shell-command>/g;

/**
 * The `!command`s that went with `prompt` without a record of their own (typed before the first
 * prompt of a file, when there was no file yet): read from the message the model got.
 */
function sentWith(
  prompt: { time: string | null },
  t: Trajectory,
  recorded: Set<string>,
): TimelineItem[] {
  const from = time(prompt.time);
  const first = objects<{ timestamp?: unknown; input_messages?: unknown }>(t.llm_interactions)
    .find((i) => from === null || (time(i.timestamp) ?? -Infinity) >= from);
  const message = objects<{ role?: unknown; content?: unknown }>(first?.input_messages)
    .findLast((m) => m.role === "user");
  const content = str(message?.content);
  if (!content) return [];
  return [...content.matchAll(SHELL_BLOCK)]
    .filter((m) => !recorded.has(m[1]))
    .map((m) => ({
      kind: "shell" as const,
      time: prompt.time,
      command: m[1],
      output: m[2],
      sent: true as const,
    }));
}

/** How many seconds the steps took, summed (the user's time between turns left out). */
export function workingSeconds(items: readonly TimelineItem[]): number | null {
  const known = items.flatMap((i) => i.kind === "step" && i.elapsed !== null ? [i.elapsed] : []);
  return known.length ? known.reduce((a, b) => a + b, 0) : null;
}

function clock(value: string | null): string {
  const t = time(value);
  return t === null
    ? ""
    : ` <span class="meta">${text(new Date(t).toISOString().slice(11, 19))} UTC</span>`;
}

/** An entry other than a step, as HTML. */
export function eventBlock(item: TimelineItem, limits: BlockLimits): string {
  switch (item.kind) {
    case "prompt":
      return `<div class="you"><h4>You${clock(item.time)}</h4><div class="says">${
        block(item.text, limits)
      }</div></div>`;
    case "shell":
      return `<details class="event fold" open><summary><span class="tool">!</span> <span class="mono">${
        text(item.command)
      }</span>${clock(item.time)}${
        item.sent ? ` <span class="meta">(sent with the next prompt)</span>` : ""
      }</summary><pre class="out">${block(item.output, limits)}</pre></details>`;
    case "undo":
      return `<div class="event"><h4>/undo${clock(item.time)}</h4><pre class="out">${
        block(item.said, limits)
      }</pre></div>`;
    case "rewind": {
      const r = item.record;
      const what = [r.files === true ? "files" : "", r.conversation === true ? "conversation" : ""]
        .filter(Boolean).join(" and ") || "nothing";
      const undo = typeof r.before_checkpoint === "number"
        ? `; the state before is checkpoint ${text(r.before_checkpoint)}`
        : "";
      return `<div class="event"><h4>/rewind${clock(item.time)}</h4><p>back to turn ${
        text(r.to_turn)
      } (checkpoint ${text(r.to_checkpoint)}): ${what}${undo}</p></div>`;
    }
    case "compact": {
      const messages = objects<{ role?: unknown; content?: unknown }>(item.record.messages);
      const summary = messages.filter((m) => m.role === "user").map((m) => str(m.content) ?? "")
        .join("\n\n");
      return `<details class="event fold" open><summary><span class="tool">/compact</span>${
        clock(item.time)
      } <span class="meta">the conversation replaced by the model's summary (${messages.length} message(s))</span></summary><div class="says">${
        block(summary, limits)
      }</div></details>`;
    }
    case "part":
      return `<p class="note part">The conversation goes on after /compact in session ${
        text(item.part.trajectory.session_id ?? "?")
      } (<span class="mono">${text(item.part.path)}</span>).</p>`;
    case "step":
      return "";
  }
}
