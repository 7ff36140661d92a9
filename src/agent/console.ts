/** Progress on stderr: one concise line per step and a summary at the end. */
import { describeCall } from "../tools/catalog.ts";
import { oneLine } from "../tools/describe.ts";
import type { ToolCallResult } from "../tools/executor.ts";
import type { LLMToolCall, LLMUsage } from "../llm/types.ts";
import type { FileChange } from "./patch_stats.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";

/** What a run is about to do. */
export interface RunStart {
  task: string;
  workspace: string;
  provider: string;
  model: string;
  trajectory: string;
  replay: boolean;
}

/** What a run left behind, for the closing report. */
export interface RunReport {
  files: FileChange[];
  patchPath: string | null;
  trajectory: string;
  usage: LLMUsage;
  costUsd: number | null;
}

/** How a task (or one turn of a conversation) ended, for the console's closing line. */
export interface TaskSummary {
  success: boolean;
  steps: number;
  usage: LLMUsage;
  seconds: number;
  /** The model's final answer, if any. */
  result: string | null;
  /** Tokens to show on the closing line (a turn's own); the live console leaves them out unset. */
  tokens?: number;
}

/** One decision of the network proxy, as the events show it: host and port, never a path. */
export interface NetworkEvent {
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused (`not in allow list`), or `allowed`. */
  reason: string;
}

/** Where the agent reports progress. The optional hooks let a live console show work as it
 * happens; a console without `text` gets whole responses only (the client does not stream). */
export interface AgentConsole {
  /** A run starts (else a plain note says so). */
  start?(info: RunStart): void;
  /** A model call starts. */
  waiting?(step: number): void;
  /** A piece of the model's text arrived. */
  text?(delta: string): void;
  /** The step's tool calls are about to run. */
  calling?(step: number, calls: LLMToolCall[]): void;
  step(step: number, calls: LLMToolCall[], results: ToolCallResult[], text: string): void;
  note(message: string): void;
  /**
   * The network proxy allowed or refused a destination (the note says so too); a console that
   * emits events (`stream-json`) gives it one of its own.
   */
  network?(decision: NetworkEvent): void;
  /** The closing report: files changed, where the patch and the trajectory went, cost. */
  finish?(report: RunReport): void;
  /** The task (or turn) ended. */
  summary(info: TaskSummary): void;
}

/** The longest subject shown beside a call's tool name, and the longest name. */
const SUBJECT_CHARS = 80;
const NAME_CHARS = 80;

function shorten(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

// A failure's explanation is at its end (a traceback's last line), not its start.
function lastLine(text: string): string {
  return text.split("\n").findLast((l) => l.trim() !== "") ?? text;
}

/** Writes progress lines to stderr. */
export class StderrConsole implements AgentConsole {
  readonly #encoder = new TextEncoder();

  constructor(private readonly quiet = false) {}

  #write(line: string): void {
    // The model's text, tool names and results pass here: secrets masked, escapes made inert.
    if (this.quiet) return;
    const bytes = this.#encoder.encode(`${terminalText(maskOutput(line))}\n`);
    let written = 0;
    while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
  }

  step(step: number, calls: LLMToolCall[], results: ToolCallResult[], text: string): void {
    if (calls.length === 0) {
      this.#write(`[${step}] (no tool call) ${shorten(text, 100)}`);
      return;
    }
    calls.forEach((call, i) => {
      const result = results[i];
      // The call by its description: its subject is masked, on one line and bounded.
      const subject = oneLine(describeCall(call.name, call.arguments).subject, SUBJECT_CHARS);
      const name = oneLine(String(call.name), NAME_CHARS);
      const status = !result
        ? "no result"
        : result.success
        ? "ok"
        : result.error
        ? `failed: ${shorten(lastLine(result.error), 120)}`
        : `failed (exit ${result.error_code})`;
      this.#write(`[${step}] ${name}${subject ? ` ${subject}` : ""} → ${status}`);
    });
  }

  note(message: string): void {
    this.#write(message);
  }

  summary(info: TaskSummary): void {
    const tokens = info.usage.input_tokens + info.usage.output_tokens;
    this.#write(
      `${info.success ? "✓ completed" : "✗ not completed"} in ${info.steps} step(s), ` +
        `${info.seconds.toFixed(1)} s, ${tokens} tokens`,
    );
    if (info.result) this.#write(shorten(info.result, 400));
  }
}
