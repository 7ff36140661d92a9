/**
 * Step summaries in the spirit of Trae Agent's Lakeview: a separately configured model labels each
 * step with a tag and one line. It runs beside the main loop (the loop never waits for it) and can
 * never fail the run: an error only means that step has no summary.
 */
import { addUsage, emptyUsage, type LLMClient, type LLMResponse } from "../llm/types.ts";
import type { ToolCallResult } from "../tools/executor.ts";

/** The labels a step can get. */
export const LAKEVIEW_TAGS = [
  "EXAMINE_CODE",
  "WRITE_TEST",
  "VERIFY_TEST",
  "WRITE_FIX",
  "VERIFY_FIX",
  "REPORT",
  "THINK",
  "OUTLIER",
] as const;

/** One step's label. */
export interface StepSummary {
  tag: typeof LAKEVIEW_TAGS[number];
  summary: string;
}

const SYSTEM = `You label the steps of a coding agent for a person watching it work.
Answer with exactly one line: TAG: summary
TAG is one of ${LAKEVIEW_TAGS.join(", ")}:
EXAMINE_CODE reading or searching code; WRITE_TEST writing a test or reproduction; VERIFY_TEST
running one to see it fail; WRITE_FIX changing the code; VERIFY_FIX running tests after a change;
REPORT summarising or finishing; THINK planning; OUTLIER anything else.
The summary is at most 15 words, in the present tense, about what the agent does in this step.`;

const MAX_CHARS = 6000;

/** Parses `TAG: summary`; anything else is an OUTLIER with the text as summary. */
export function parseSummary(text: string): StepSummary {
  const line = text.trim().split("\n").find((l) => l.trim() !== "") ?? "";
  const match = /^\W*([A-Z_]+)\W*[:\-–]\s*(.+)$/.exec(line.trim());
  const tag = LAKEVIEW_TAGS.find((t) => t === match?.[1]);
  if (match && tag) return { tag, summary: match[2].trim() };
  return { tag: "OUTLIER", summary: line.trim().slice(0, 200) || "(no summary)" };
}

/**
 * Summarises steps in the background. Its client is the session's budget's metered one when a
 * cap is set (src/agent/budget.ts): a summary is not asked for once a cap is reached, and each
 * one's spend counts.
 */
export class Lakeview {
  readonly #pending = new Set<Promise<void>>();
  /** What the summaries answered so far used (for /cost). */
  readonly usage = emptyUsage();

  constructor(readonly client: LLMClient, private readonly task: string) {}

  /** Starts summarising a step; `done` receives the summary, or null when it failed. */
  summarize(
    step: number,
    response: LLMResponse,
    results: readonly ToolCallResult[],
    done: (summary: StepSummary | null, error?: string) => void,
  ): void {
    const calls = response.tool_calls.map((c, i) => {
      const args = typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments);
      const r = results[i];
      return `- ${c.name} ${args.slice(0, 600)} → ${r?.success ? "ok" : "failed"}`;
    }).join("\n");
    const prompt = `Task: ${this.task.slice(0, 1500)}\n\nStep ${step}.\nThe agent said: ` +
      `${response.content.slice(0, 1500) || "(nothing)"}\nTool calls:\n${calls || "(none)"}`;
    const job = this.client.chat(
      [{ role: "system", content: SYSTEM }, { role: "user", content: prompt.slice(0, MAX_CHARS) }],
      [],
    ).then(
      (reply) => {
        addUsage(this.usage, reply.usage);
        done(parseSummary(reply.content));
      },
      (e) => done(null, e instanceof Error ? e.message : String(e)),
    ).finally(() => this.#pending.delete(job));
    this.#pending.add(job);
  }

  /** Waits for summaries still running, at most `timeoutMs`. */
  async drain(timeoutMs = 10_000): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs));
    await Promise.race([Promise.allSettled([...this.#pending]), timeout]);
    clearTimeout(timer);
  }
}
