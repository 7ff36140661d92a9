/**
 * The console of `deft run` and `deft interactive` on a terminal: a spinner with the elapsed time
 * while the model thinks, the model's words as they stream in, each tool call with its main
 * argument as it starts, then ok in colour with the first lines of its output (a failure with its
 * last lines, where the error is), a coloured diff of every edit, and a closing report (files
 * changed, patch, trajectory, tokens, cost).
 * Everything goes to stderr; stdout stays free for `--json` and pipelines.
 */
import type { AgentConsole, RunReport, RunStart, TaskSummary } from "../../agent/console.ts";
import type { LLMToolCall } from "../../llm/types.ts";
import { describeCall } from "../../tools/catalog.ts";
import type { ToolCallResult } from "../../tools/executor.ts";
import { diffSince, type Snapshot, snapshot } from "./edit_diff.ts";
import { maskOutput, StreamMasker } from "../../policy/secrets.ts";
import { printable } from "./printable.ts";
import { Spinner } from "./spinner.ts";
import { screenWrite } from "./screen.ts";
import { Style } from "./style.ts";

const OUTPUT_LINES = 6;
/** A failure shows this many of its last lines. */
const FAILURE_LINES = 8;
const DIFF_LINES = 40;
const encoder = new TextEncoder();

/** How the live console behaves. */
export interface LiveOptions {
  /** Colour the output. */
  color: boolean;
  /** A terminal: draw the spinner (and redraw lines in place). */
  live: boolean;
  workspace: string;
  /** Where bytes go (default: stderr, around the composer line of an interactive turn). */
  write?: (bytes: Uint8Array) => void;
}

/** Shows a run as it happens. */
export class LiveConsole implements AgentConsole {
  readonly #style: Style;
  readonly #spinner?: Spinner;
  readonly #write: (bytes: Uint8Array) => void;
  readonly #workspace: string;
  #streamed = "";
  // The model's words streamed since it was last called, as they came (see `showed`).
  #said = "";
  // A key split across two deltas is masked whole: its start waits for the rest.
  #stream = new StreamMasker();
  #snapshots = new Map<string, Snapshot>();

  constructor(options: LiveOptions) {
    this.#style = new Style(options.color);
    this.#write = options.write ?? screenWrite;
    this.#workspace = options.workspace;
    if (options.live) this.#spinner = new Spinner(this.#write);
  }

  // Every byte the console writes passes here: secrets masked (the trajectory's set), and the
  // pieces are already sanitised (printable) before colour is added.
  #out(text: string): void {
    this.#write(encoder.encode(maskOutput(text)));
  }

  #line(text: string): void {
    this.#spinner?.clear();
    this.#flushText();
    this.#endText();
    this.#out(`${text}\n`);
  }

  // Closes a streamed answer that did not end its last line.
  #endText(): void {
    if (this.#streamed && !this.#streamed.endsWith("\n")) this.#out("\n");
    this.#streamed = this.#streamed ? "\n" : "";
  }

  start(info: RunStart): void {
    const s = this.#style;
    const verb = info.replay ? "replaying" : "running";
    this.#line(
      `${s.bold("deft")} ${verb} ${s.cyan(printable(`${info.provider}/${info.model}`))} in ` +
        printable(info.workspace),
    );
    this.#line(s.dim(`trajectory: ${printable(info.trajectory)}`));
  }

  waiting(step: number): void {
    this.#flushText();
    this.#streamed = "";
    this.#said = "";
    this.#spinner?.start(`step ${step} · waiting for the model`);
  }

  text(delta: string): void {
    if (!delta) return;
    this.#spinner?.stop();
    this.#said += delta;
    this.#show(this.#stream.push(delta));
  }

  /** Whether the model's last words, streamed on the console as they came, are `answer`. */
  showed(answer: string): boolean {
    this.#flushText();
    return answer.trim() !== "" && this.#said.trim() === answer.trim();
  }

  #flushText(): void {
    this.#show(this.#stream.flush());
  }

  #show(text: string): void {
    if (!text) return;
    const shown = printable(text);
    this.#out(shown);
    this.#streamed += shown;
  }

  calling(step: number, calls: LLMToolCall[]): void {
    this.#spinner?.stop();
    for (const call of calls) {
      this.#line(this.#callLine(call));
      const shot = snapshot(call, this.#workspace);
      if (shot) this.#snapshots.set(call.call_id, shot);
    }
    const names = [...new Set(calls.map((c) => c.name))].join(", ");
    this.#spinner?.start(`step ${step} · running ${printable(maskOutput(names))}`);
  }

  step(_step: number, calls: LLMToolCall[], results: ToolCallResult[], text: string): void {
    this.#spinner?.stop();
    this.#flushText();
    const s = this.#style;
    // A client that does not stream (a replay) hands over the whole text at the end.
    if (!this.#streamed && text.trim()) this.#out(`${printable(text.trimEnd())}\n`);
    this.#endText();
    if (calls.length === 0) {
      this.#line(s.dim("(no tool call)"));
      return;
    }
    calls.forEach((call, i) => {
      const result = results[i];
      if (!result) {
        this.#line(`  ${s.red("✗ no result")}`);
        return;
      }
      const shot = this.#snapshots.get(call.call_id);
      this.#snapshots.delete(call.call_id);
      if (!result.success) {
        // Where a command failed is at the end of what it printed: its last lines, stderr last.
        const exit = result.error_code > 0 ? ` (exit ${result.error_code})` : "";
        this.#line(`  ${s.red(`✗ failed${exit}`)}`);
        const text = [result.output ?? "", result.error ?? ""]
          .map((t) => t.replace(/\n+$/, ""))
          .filter((t) => t.trim() !== "")
          .join("\n");
        for (const line of tailLines(text, FAILURE_LINES)) {
          this.#line(s.dim(`    │ ${printable(line)}`));
        }
        return;
      }
      this.#line(`  ${s.green("✓ ok")}`);
      const diff = shot ? diffSince(shot) : "";
      if (diff) {
        this.#line(`  ${s.bold(printable(shot!.relative))}`);
        for (const line of clipLines(diff, DIFF_LINES)) this.#line(`    ${this.#diffLine(line)}`);
      } else {
        for (const line of clipLines(result.output ?? "", OUTPUT_LINES)) {
          this.#line(s.dim(`    │ ${printable(line)}`));
        }
      }
    });
    this.#streamed = "";
  }

  note(message: string): void {
    this.#line(this.#style.dim(printable(message)));
  }

  #diffLine(raw: string): string {
    const s = this.#style;
    const line = printable(raw);
    if (line.startsWith("@@")) return s.cyan(line);
    if (line.startsWith("+")) return s.green(line);
    if (line.startsWith("-")) return s.red(line);
    return line;
  }

  summary(info: TaskSummary): void {
    this.#spinner?.stop();
    const s = this.#style;
    const head = info.success ? s.green("✓ completed") : s.red("✗ not completed");
    const tokens = info.tokens === undefined ? "" : `, ${info.tokens} tokens`;
    this.#line(`${head} in ${info.steps} step(s), ${info.seconds.toFixed(1)} s${tokens}`);
    if (info.result && !info.success) this.#line(printable(info.result));
  }

  finish(report: RunReport): void {
    const s = this.#style;
    if (report.files.length > 0) {
      this.#line(s.bold(`files changed (${report.files.length}):`));
      for (const f of report.files) {
        const counts = f.binary
          ? s.dim("binary")
          : `${s.green(`+${f.added}`)} ${s.red(`−${f.removed}`)}`;
        this.#line(`  ${printable(f.path)}  ${counts}`);
      }
    }
    if (report.patchPath) this.#line(`patch written to ${printable(report.patchPath)}`);
    const u = report.usage;
    const cached = u.cache_read_input_tokens ? `, ${u.cache_read_input_tokens} cached` : "";
    const cost = report.costUsd === null ? "" : ` · cost $${report.costUsd.toFixed(4)}`;
    this.#line(s.dim(`tokens: ${u.input_tokens} in${cached}, ${u.output_tokens} out${cost}`));
  }

  #callLine(call: LLMToolCall): string {
    const s = this.#style;
    const arg = mainArgument(call);
    return `${s.cyan("●")} ${s.bold(printable(call.name))}${arg ? ` ${arg}` : ""}`;
  }
}

/** What a call does, in a line shown beside the tool's name (its description's subject). */
export function mainArgument(call: LLMToolCall): string {
  return printable(clip(describeCall(call.name, call.arguments).subject, 100));
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The last `max` lines of `text`, after a line counting the ones left out above. */
export function tailLines(text: string, max: number): string[] {
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") return [];
  const shown = lines.slice(-max).map((l) => l.slice(0, 200));
  if (lines.length <= max) return shown;
  return [`… ${lines.length - max} line(s) above`, ...shown];
}

function clipLines(text: string, max: number): string[] {
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") return [];
  if (lines.length <= max) return lines.map((l) => l.slice(0, 200));
  return [
    ...lines.slice(0, max).map((l) => l.slice(0, 200)),
    `… ${lines.length - max} more line(s)`,
  ];
}
