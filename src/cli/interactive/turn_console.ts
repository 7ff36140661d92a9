/**
 * The console of `deft interactive`: the same console as `deft run` (the live one on a terminal,
 * plain lines otherwise), told about turns. The `running with … trajectory:` header shows once per
 * conversation (a new trajectory after /clear or /resume shows it again), not per turn; a turn's
 * closing line has that turn's time and tokens, not the conversation's; the per-turn "trajectory
 * saved" note is left out (/status names the file). It also keeps the text the model streamed in
 * the turn's last step, so the answer is not printed twice.
 */
import type { AgentConsole, RunReport, RunStart, TaskSummary } from "../../agent/console.ts";
import type { LLMToolCall, LLMUsage } from "../../llm/types.ts";
import type { ToolCallResult } from "../../tools/executor.ts";

/** Wraps `inner` for a conversation of turns. */
export class TurnConsole implements AgentConsole {
  /** Present when the inner console streams: the client streams only for a console with `text`. */
  readonly text?: (delta: string) => void;
  readonly waiting?: (step: number) => void;
  readonly calling?: (step: number, calls: LLMToolCall[]) => void;
  readonly finish?: (report: RunReport) => void;
  #header: string | undefined;
  #trajectory = "";
  #saved: string | undefined;
  #started = performance.now();
  #before = { input_tokens: 0, output_tokens: 0 };
  #streamed = "";
  /**
   * Where notes go instead of the inner console while the session is assembled behind a drawn
   * prompt (above the prompt, src/cli/interactive.ts); unset once it is.
   */
  aside?: (text: string) => void;

  constructor(readonly inner: AgentConsole) {
    if (inner.text) {
      this.text = (delta) => {
        this.#streamed += delta;
        inner.text!(delta);
      };
    }
    this.waiting = (step) => {
      this.#streamed = "";
      inner.waiting?.(step);
    };
    if (inner.calling) this.calling = (step, calls) => inner.calling!(step, calls);
  }

  /** A turn starts; `usage` is the conversation's so far (the turn's closing line counts on). */
  beginTurn(usage: LLMUsage | undefined): void {
    this.#started = performance.now();
    this.#before = {
      input_tokens: usage?.input_tokens ?? 0,
      output_tokens: usage?.output_tokens ?? 0,
    };
    this.#streamed = "";
  }

  /** Whether the model's words in the turn's last step, as streamed, are `answer`. */
  showed(answer: string): boolean {
    return this.inner.text !== undefined && this.#streamed.trim() === answer.trim() &&
      answer.trim() !== "";
  }

  start(info: RunStart): void {
    this.#trajectory = info.trajectory;
    if (this.#header === info.trajectory) return;
    this.#header = info.trajectory;
    if (this.inner.start) this.inner.start(info);
    else {
      this.inner.note(
        `deft: running with ${info.provider}/${info.model} in ${info.workspace}; ` +
          `trajectory: ${info.trajectory}`,
      );
    }
  }

  step(step: number, calls: LLMToolCall[], results: ToolCallResult[], text: string): void {
    this.inner.step(step, calls, results, text);
  }

  note(message: string): void {
    // The session says where the trajectory went after every turn; the header said it once.
    if (this.#saved !== undefined && message === this.#saved) {
      this.#saved = undefined;
      return;
    }
    if (this.aside) this.aside(message);
    else this.inner.note(message);
  }

  summary(info: TaskSummary): void {
    const usage: LLMUsage = {
      ...info.usage,
      input_tokens: info.usage.input_tokens - this.#before.input_tokens,
      output_tokens: info.usage.output_tokens - this.#before.output_tokens,
    };
    this.inner.summary({
      ...info,
      // The answer is printed whole by the loop (or was streamed), not clipped here.
      result: null,
      usage,
      seconds: (performance.now() - this.#started) / 1000,
      tokens: usage.input_tokens + usage.output_tokens,
    });
    this.#saved = `trajectory saved to ${this.#trajectory}`;
  }
}
