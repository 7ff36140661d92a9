/**
 * `--output-format stream-json`: one JSON object per line on stdout as the run happens, each with
 * a `type`. The shapes are the trajectory's: `tool_call` is a recorded tool call, `tool_result` a
 * recorded tool result, `step` an agent step. Events: `run_started`, `text` (a piece of the
 * model's answer), `tool_call`, `tool_result`, `step`, `network` (a destination the network
 * proxy allowed or refused: host, port, `allowed`, `reason`), `run_done` (the `--json` summary)
 * and `error`. Progress notes stay on stderr as plain lines.
 */
import type { AgentConsole, NetworkEvent, RunStart, TaskSummary } from "../../agent/console.ts";
import type { LLMToolCall } from "../../llm/types.ts";
import type { ToolCallResult } from "../../tools/executor.ts";
import { terminalText } from "../../policy/terminal_text.ts";
import { maskOutput, outputMasker, StreamMasker } from "../../policy/secrets.ts";

const encoder = new TextEncoder();

/** One event as its NDJSON line, secrets masked in keys and values as in the trajectory. */
export function eventLine(event: Record<string, unknown>): string {
  return `${JSON.stringify(outputMasker().maskDeep(event))}\n`;
}

/** Writes one event line to stdout, whole. */
export function writeEvent(event: Record<string, unknown> & { type: string }): void {
  const bytes = encoder.encode(eventLine(event));
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

/** Emits the run as NDJSON events. */
export class StreamJsonConsole implements AgentConsole {
  #step = 0;
  // A key split across two deltas is masked whole: its start waits for the rest.
  #stream = new StreamMasker();

  start(info: RunStart): void {
    writeEvent({
      type: "run_started",
      task: info.task,
      working_dir: info.workspace,
      provider: info.provider,
      model: info.model,
      trajectory: info.trajectory,
      replay: info.replay,
    });
  }

  waiting(step: number): void {
    this.#flushText();
    this.#step = step;
  }

  text(delta: string): void {
    if (!delta) return;
    const ready = this.#stream.push(delta);
    if (ready) writeEvent({ type: "text", step: this.#step, delta: ready });
  }

  #flushText(): void {
    const rest = this.#stream.flush();
    if (rest) writeEvent({ type: "text", step: this.#step, delta: rest });
  }

  calling(step: number, calls: LLMToolCall[]): void {
    this.#flushText();
    for (const call of calls) {
      writeEvent({
        type: "tool_call",
        step,
        call_id: call.call_id,
        name: call.name,
        arguments: call.arguments,
      });
    }
  }

  step(step: number, calls: LLMToolCall[], results: ToolCallResult[], text: string): void {
    this.#flushText();
    const recorded = results.map((r) => ({
      call_id: r.call_id,
      name: r.name,
      success: r.success,
      result: r.output,
      error: r.error,
      ...(r.approval ? { approval: r.approval } : {}),
    }));
    for (const r of recorded) writeEvent({ type: "tool_result", step, ...r });
    writeEvent({
      type: "step",
      step_number: step,
      state: "completed",
      content: text,
      tool_calls: calls,
      tool_results: recorded,
    });
  }

  note(message: string): void {
    this.#flushText();
    const bytes = encoder.encode(`${terminalText(maskOutput(message))}\n`);
    let written = 0;
    while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
  }

  network(decision: NetworkEvent): void {
    this.#flushText();
    writeEvent({ type: "network", step: this.#step, ...decision });
  }

  summary(_info: TaskSummary): void {
    this.#flushText();
    // The `run_done` event carries the summary; run.ts writes it once the patch is known.
  }
}
