/**
 * A run's background shells as lanes, one per shell, from what the trajectory already holds: the
 * bash call with `run_in_background` that started it (its answer names the shell id), each
 * `bash_output` that read it (the status it found, how much new output), the `kill_shell` that
 * stopped it, and its end as the first read that found it exited or killed. Each lane is a bar
 * over the run's time (an inline SVG, presentation attributes only) and the list of those events
 * with their times. What was never recorded (a shell that ended with the session, unread) is
 * said as "not seen ending". Every string from the run goes through escape.ts.
 */
import type { RecordedStep, RecordedToolResult } from "../trajectory/recorder.ts";
import type { LLMToolCall } from "../llm/types.ts";
import { text } from "./escape.ts";

/** One thing that happened to a background shell, at a step's time. */
interface LaneEvent {
  time: number | null;
  step: unknown;
  what: string;
  /** A mark on the bar: a read, a kill, the end. */
  mark: "start" | "read" | "kill" | "end";
}

interface Lane {
  id: string;
  command: string;
  events: LaneEvent[];
  /** How it ended, when a read or a kill said so. */
  end?: { words: string; cls: "s-completed" | "s-failed" | "s-interrupted" };
}

// More lanes than this are listed without their bars.
const MAX_LANES = 200;
const BAR_W = 1000;
const BAR_H = 18;

function objects<T>(value: unknown): T[] {
  return Array.isArray(value) ? value.filter((v) => v !== null && typeof v === "object") : [];
}

function args(call: LLMToolCall): Record<string, unknown> {
  const a = call.arguments;
  return a !== null && typeof a === "object" && !Array.isArray(a)
    ? a as Record<string, unknown>
    : {};
}

function when(value: unknown): number | null {
  const t = typeof value === "string" ? Date.parse(value) : NaN;
  return Number.isFinite(t) ? t : null;
}

/** The lanes of the background shells `steps` started, in the order they started. */
function lanes(steps: readonly RecordedStep[]): Lane[] {
  const byId = new Map<string, Lane>();
  for (const s of steps) {
    const time = when(s.timestamp);
    const results = new Map(
      objects<RecordedToolResult>(s.tool_results).map((r) => [r.call_id, r]),
    );
    for (const call of objects<LLMToolCall>(s.tool_calls ?? s.llm_response?.tool_calls)) {
      const result = results.get(call.call_id);
      if (!result) continue;
      const a = args(call);
      const answer = typeof result.result === "string" ? result.result : "";
      if (call.name === "bash" && a.run_in_background === true && result.success) {
        const id = /^shell_id: (\S+)/.exec(answer)?.[1];
        if (!id || byId.has(id)) continue;
        const command = typeof a.command === "string" ? a.command : "";
        byId.set(id, {
          id,
          command,
          events: [{ time, step: s.step_number, what: "started", mark: "start" }],
        });
        continue;
      }
      const lane = typeof a.shell_id === "string" ? byId.get(a.shell_id.trim()) : undefined;
      if (!lane) continue;
      if (call.name === "kill_shell" && result.success && !lane.end) {
        lane.events.push({
          time,
          step: s.step_number,
          what: "killed with kill_shell",
          mark: "kill",
        });
        lane.end = { words: "killed", cls: "s-interrupted" };
      } else if (call.name === "bash_output") {
        read(lane, answer, time, s.step_number);
      }
    }
  }
  return [...byId.values()];
}

/** A `bash_output` answer as an event of `lane`; its end when it is the first to find one. */
function read(lane: Lane, answer: string, time: number | null, step: unknown): void {
  const lines = answer.split("\n");
  const state = /^status: (running|killed|exited \(exit code (\d+)\))$/.exec(lines[1] ?? "");
  if (!state) return;
  const at = lines.findIndex((line, i) => i > 1 && /^new output( matching .*)?:$/.test(line));
  const shown = at < 0 ? [] : lines.slice(at + 1);
  if (shown.at(-1) === "") shown.pop();
  const amount = shown.length === 0 ? "no new output" : `${shown.length} new line(s)`;
  lane.events.push({ time, step, what: `read: ${state[1]}, ${amount}`, mark: "read" });
  if (state[1] === "running" || lane.end) return;
  const exit = state[2];
  lane.events.push({
    time,
    step,
    what: exit === undefined ? "ended: killed" : `ended: exit code ${exit}`,
    mark: "end",
  });
  lane.end = exit === undefined
    ? { words: "killed", cls: "s-interrupted" }
    : { words: `exited ${exit}`, cls: exit === "0" ? "s-completed" : "s-failed" };
}

/** The bar of one lane over [from, to]: the span it was seen running, a mark per event. */
function bar(lane: Lane, from: number, to: number): string {
  const x = (t: number | null) =>
    t === null ? null : Math.round(((t - from) / Math.max(1, to - from)) * BAR_W);
  const xs = lane.events.map((e) => x(e.time));
  const start = xs[0];
  if (start === null) return "";
  const last = lane.end ? Math.max(...xs.filter((v): v is number => v !== null)) : BAR_W;
  const colour = { start: "#1d232a", read: "#4a78b0", kill: "#b9770e", end: "#c0392b" };
  const marks = lane.events.map((e, i) => {
    const at = xs[i];
    return at === null
      ? ""
      : `<circle cx="${Math.min(BAR_W - 5, Math.max(5, at))}" cy="${BAR_H / 2}" r="5" fill="${
        colour[e.mark]
      }"><title>${text(e.what)}</title></circle>`;
  }).join("");
  return `<svg class="lane-bar" viewBox="0 0 ${BAR_W} ${BAR_H}" width="100%" height="${BAR_H}" ` +
    `preserveAspectRatio="none" role="img" aria-label="${text(`${lane.id} over the run`)}">` +
    `<rect x="0" y="${BAR_H / 2 - 1}" width="${BAR_W}" height="2" fill="#d6d9de"/>` +
    `<rect x="${start}" y="${BAR_H / 2 - 4}" width="${Math.max(2, last - start)}" height="8" ` +
    `fill="${lane.end ? "#9aa5b1" : "#4a78b0"}"/>${marks}</svg>`;
}

function clock(time: number | null): string {
  return time === null ? "—" : new Date(time).toISOString().slice(11, 19);
}

/**
 * The "Background shells" section of a run whose steps are `steps` (over every file of the
 * conversation); empty when none started one.
 */
export function backgroundLanes(steps: readonly RecordedStep[], endTime?: unknown): string {
  const found = lanes(steps);
  if (found.length === 0) return "";
  const times = steps.map((s) => when(s.timestamp)).filter((t): t is number => t !== null);
  const end = when(endTime);
  if (end !== null) times.push(end);
  const from = Math.min(...times);
  const to = Math.max(...times);
  const shown = found.slice(0, MAX_LANES).map((lane) => {
    const status = lane.end
      ? `<span class="badge ${lane.end.cls}">${text(lane.end.words)}</span>`
      : `<span class="badge s-unfinished">not seen ending</span>`;
    const events = lane.events.map((e) => {
      const after = e.time !== null && lane.events[0].time !== null
        ? ` (+${((e.time - lane.events[0].time) / 1000).toFixed(1)} s)`
        : "";
      return `<li><span class="mono">${clock(e.time)}</span>${text(after)} step ${text(e.step)}: ${
        text(e.what)
      }</li>`;
    }).join("");
    return `<div class="lane"><div><span class="mono">${text(lane.id)}</span> ${status} ` +
      `<span class="mono">${text(lane.command.split("\n")[0].slice(0, 200))}</span></div>` +
      `${times.length > 0 ? bar(lane, from, to) : ""}<ol class="lane-events">${events}</ol></div>`;
  }).join("");
  const more = found.length > MAX_LANES
    ? `<p class="note">${found.length - MAX_LANES} more background shells not shown</p>`
    : "";
  return `<h4>Background shells</h4><div class="lanes">${shown}${more}</div>`;
}
