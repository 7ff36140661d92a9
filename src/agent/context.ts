/**
 * Keeps the conversation under the model's context window. Tokens are estimated from characters,
 * calibrated by the input token counts the provider reports. When the estimate nears the window,
 * the oldest tool outputs (and long tool-call arguments) are shortened first; when that is not
 * enough, the oldest steps are removed whole (a call never loses its result), and a note tells the
 * model so. The most recent steps stay whole as long as anything else can give way. Every change is
 * reported, so the trajectory can say what the model no longer saw.
 */
import type { LLMMessage } from "../llm/types.ts";

/** One shortening of a message, or the removal of a whole old step. */
export interface ContextEvent {
  action: "shortened" | "removed";
  step: number;
  message_index: number;
  role: "tool" | "assistant";
  call_id: string | null;
  before_chars: number;
  after_chars: number;
}

/** Settings of the manager. */
export interface ContextOptions {
  /** The model's window in tokens. */
  window: number;
  /** Tokens to keep free for the answer. */
  reserve?: number;
  /** Assistant turns at the end that are never shortened (as long as the rest suffices). */
  keepRecentTurns?: number;
}

const CHARS_PER_TOKEN = 4;
const KEPT_CHARS = 400;

/** Estimates and trims a conversation to fit a window. */
export class ContextManager {
  #ratio = 1; // reported tokens per estimated token, learned from usage

  constructor(private readonly options: ContextOptions) {}

  /** Estimated tokens of `messages` plus the tool definitions' `extraChars`. */
  estimate(messages: readonly LLMMessage[], extraChars = 0): number {
    let chars = extraChars;
    for (const m of messages) chars += messageChars(m);
    return Math.ceil((chars / CHARS_PER_TOKEN) * this.#ratio);
  }

  /** Learns from a response: the provider counted `reportedTokens` for what we estimated. */
  calibrate(estimated: number, reportedTokens: number): void {
    if (estimated > 0 && reportedTokens > 0) {
      this.#ratio = Math.min(4, Math.max(0.25, this.#ratio * (reportedTokens / estimated)));
    }
  }

  /** The budget for the prompt: the window minus the answer's reserve. */
  get budget(): number {
    const half = Math.floor(this.options.window / 2);
    const reserve = Math.min(half, this.options.reserve ?? Math.min(4096, half / 2));
    return this.options.window - reserve;
  }

  /**
   * Shortens old messages in place until the estimate fits the budget (with some headroom, so it
   * does not happen on every step). Returns what was shortened.
   */
  fit(messages: LLMMessage[], step: number, extraChars = 0): ContextEvent[] {
    if (this.estimate(messages, extraChars) <= this.budget) return [];
    const target = Math.floor(this.budget * 0.7);
    const fits = (goal: number) => this.estimate(messages, extraChars) <= goal;
    const events: ContextEvent[] = [];
    const keep = this.options.keepRecentTurns ?? 3;
    // 1. Shorten old messages, sparing the recent turns, aiming below the budget for headroom.
    this.#shortenUntil(messages, step, keep, () => fits(target), events);
    // 2. Remove the oldest turns whole, still sparing the recent ones.
    while (!fits(target) && removeOldestTurn(messages, keep, step, events)) { /* next */ }
    // 3. The window is a hard limit: shorten the recent turns too, the newest last.
    for (const spare of [1, 0]) {
      if (fits(this.budget)) break;
      this.#shortenUntil(messages, step, spare, () => fits(this.budget), events);
    }
    return events;
  }

  #shortenUntil(
    messages: LLMMessage[],
    step: number,
    spare: number,
    done: () => boolean,
    events: ContextEvent[],
  ): void {
    const protectedFrom = startOfRecentTurns(messages, spare);
    for (let i = 0; i < protectedFrom && !done(); i++) {
      const event = shorten(messages, i, step);
      if (event) events.push(event);
    }
  }
}

const NOTE_PREFIX = "[Context note:";

/** Removes the oldest assistant turn with its results; false when only `keep` turns are left. */
function removeOldestTurn(
  messages: LLMMessage[],
  keep: number,
  step: number,
  events: ContextEvent[],
): boolean {
  const turns = messages.flatMap((m, i) => m.role === "assistant" ? [i] : []);
  if (turns.length <= keep) return false;
  const start = turns[0];
  const end = turns[1];
  const removed = messages.splice(start, end - start);
  events.push({
    action: "removed",
    step,
    message_index: start,
    role: "assistant",
    call_id: null,
    before_chars: removed.reduce((n, m) => n + messageChars(m), 0),
    after_chars: 0,
  });
  // One note, placed before the remaining turns, counts what is gone.
  const noteIndex = messages.findIndex((m) =>
    m.role === "user" && m.content.startsWith(NOTE_PREFIX)
  );
  const before = noteIndex >= 0 ? /(\d+)/.exec(messages[noteIndex].content)?.[1] : undefined;
  const count = Number(before ?? 0) + 1;
  const note: LLMMessage = {
    role: "user",
    content: `${NOTE_PREFIX} ${count} earlier step(s) were removed to fit the context window. ` +
      `Their changes to files and to the shell remain; look again if you need their details.]`,
  };
  if (noteIndex >= 0) messages[noteIndex] = note;
  else messages.splice(start, 0, note);
  return true;
}

function messageChars(m: LLMMessage): number {
  let chars = m.content.length + 16;
  if (m.role === "assistant") {
    for (const c of m.tool_calls ?? []) {
      chars += c.name.length + JSON.stringify(c.arguments ?? "").length + 16;
    }
  }
  return chars;
}

function startOfRecentTurns(messages: LLMMessage[], turns: number): number {
  if (turns === 0) return messages.length;
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "assistant" && ++seen === turns) return i;
  }
  return 0;
}

function clip(text: string): string {
  if (text.length <= KEPT_CHARS * 2) return text;
  const removed = text.length - KEPT_CHARS * 2;
  return `${text.slice(0, KEPT_CHARS)}\n[… ${removed} characters removed to fit the context ` +
    `window; re-run the step to see them …]\n${text.slice(-KEPT_CHARS)}`;
}

function clipValues(value: unknown): unknown {
  if (typeof value === "string") return clip(value);
  if (Array.isArray(value)) return value.map(clipValues);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipValues(v)]));
  }
  return value;
}

function shorten(messages: LLMMessage[], i: number, step: number): ContextEvent | undefined {
  const m = messages[i];
  const before = messageChars(m);
  if (m.role === "tool") {
    const content = clip(m.content);
    if (content === m.content) return undefined;
    messages[i] = { ...m, content };
  } else if (m.role === "assistant" && m.tool_calls?.length) {
    const tool_calls = m.tool_calls.map((c) => ({ ...c, arguments: clipValues(c.arguments) }));
    messages[i] = { ...m, content: clip(m.content), tool_calls };
  } else {
    return undefined;
  }
  const after = messageChars(messages[i]);
  if (after >= before) return undefined;
  return {
    action: "shortened",
    step,
    message_index: i,
    role: m.role,
    call_id: m.role === "tool" ? m.call_id : null,
    before_chars: before,
    after_chars: after,
  };
}
