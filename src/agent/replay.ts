/**
 * Compares a replayed run with its recording, step by step and call by call. By default volatile
 * text (durations, temp paths, pids; see volatile.ts) is normalised on both sides first, so a
 * replay right after the recording matches; `exact` compares byte for byte.
 */
import type { Trajectory } from "../trajectory/recorder.ts";
import { replacePath } from "../llm/replay.ts";
import { normalizeVolatile } from "./volatile.ts";

/** One place where the replay's tool results differ from the recording. */
export interface Divergence {
  step: number;
  call_id: string | null;
  tool: string | null;
  field: "success" | "result" | "error" | "calls" | "missing step";
  recorded: unknown;
  replayed: unknown;
  /** For text that differs: the first differing line (1-based) with a line of context. */
  first_difference?: LineDifference;
}

/** Where two texts first differ, line by line. */
export interface LineDifference {
  line: number;
  context: string | null;
  recorded: string | null;
  replayed: string | null;
}

/** Comparison options. */
export interface CompareOptions {
  /** Compare tool output byte for byte, without normalising volatile text. */
  exact?: boolean;
}

/** Every divergence between `recorded` and `replayed` (empty when they agree). */
export function compareRuns(
  recorded: Trajectory,
  replayed: Trajectory,
  options: CompareOptions = {},
): Divergence[] {
  const same = (a: unknown, b: unknown) =>
    a === b ||
    (!options.exact && typeof a === "string" && typeof b === "string" &&
      normalizeVolatile(a) === normalizeVolatile(b));
  // A replay in another directory is compared as if the recording had run there.
  const from = recorded.working_dir;
  const to = replayed.working_dir;
  if (from && to && from !== to) recorded = replacePath(recorded, from, to);
  const found: Divergence[] = [];
  const steps = Math.max(recorded.agent_steps.length, replayed.agent_steps.length);
  for (let i = 0; i < steps; i++) {
    const a = recorded.agent_steps[i];
    const b = replayed.agent_steps[i];
    const step = a?.step_number ?? b?.step_number ?? i + 1;
    if (!a || !b) {
      found.push({
        step,
        call_id: null,
        tool: null,
        field: "missing step",
        recorded: a ? "present" : "absent",
        replayed: b ? "present" : "absent",
      });
      continue;
    }
    if (a.tool_results.length !== b.tool_results.length) {
      found.push({
        step,
        call_id: null,
        tool: null,
        field: "calls",
        recorded: a.tool_results.length,
        replayed: b.tool_results.length,
      });
    }
    a.tool_results.forEach((ra, j) => {
      const rb = b.tool_results[j];
      if (!rb) return;
      for (const field of ["success", "result", "error"] as const) {
        if (!same(ra[field], rb[field])) {
          const a = ra[field], b = rb[field];
          found.push({
            step,
            call_id: ra.call_id,
            tool: ra.name,
            field,
            recorded: a,
            replayed: b,
            ...(typeof a === "string" && typeof b === "string"
              ? { first_difference: firstDifference(a, b, !options.exact) }
              : {}),
          });
        }
      }
    });
  }
  return found;
}

/** The first line where `a` and `b` differ (after normalising, when `normalize`). */
export function firstDifference(a: string, b: string, normalize = true): LineDifference {
  const left = a.split("\n");
  const right = b.split("\n");
  const key = (line: string | undefined) =>
    line === undefined ? undefined : normalize ? normalizeVolatile(line) : line;
  let i = 0;
  while (i < left.length && i < right.length && key(left[i]) === key(right[i])) i++;
  return {
    line: i + 1,
    context: i > 0 ? left[i - 1] : null,
    recorded: left[i] ?? null,
    replayed: right[i] ?? null,
  };
}

/** The differences as lines for a reader: a verdict, then each difference with its first line. */
export function divergenceLines(divergences: Divergence[]): string[] {
  if (divergences.length === 0) return ["replay: every tool result matches the recording"];
  const lines = [`replay: ${divergences.length} difference(s) from the recording:`];
  for (const d of divergences) {
    const what = d.tool ? `${d.tool} (${d.call_id}) ${d.field}` : d.field;
    const diff = d.first_difference;
    if (!diff) {
      lines.push(
        `  step ${d.step}: ${what}: recorded ${clip(d.recorded)}, replayed ${clip(d.replayed)}`,
      );
      continue;
    }
    lines.push(`  step ${d.step}: ${what} differs at line ${diff.line}:`);
    if (diff.context !== null) lines.push(`      ${clipLine(diff.context)}`);
    lines.push(
      `    - ${
        diff.recorded === null ? "(no line: recorded output ends)" : clipLine(diff.recorded)
      }`,
      `    + ${
        diff.replayed === null ? "(no line: replayed output ends)" : clipLine(diff.replayed)
      }`,
    );
  }
  return lines;
}

function clipLine(line: string): string {
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

function clip(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
