/**
 * Background shells over ACP: a bash call with `run_in_background` stays an open tool call
 * (`in_progress`) after it answered with its shell id, and its output grows live as the model
 * reads it. Each `bash_output` of that shell adds what it read to that call's content (a
 * `tool_call_update`, the whole text so far: an update's content replaces the last) and carries
 * its status: `in_progress` while it runs, `completed` when it exited 0 or the model stopped it
 * with `kill_shell`, `failed` when it exited otherwise or was killed by anything else (a rewind,
 * the shell's end). Driven by the reads, not a timer: a read takes the output from the shell's
 * buffer, so only what the model reads is shown, and a shell never read stays `in_progress`.
 */
import type { LLMToolCall } from "../llm/types.ts";
import type { ToolCallResult } from "../tools/executor.ts";

/** The most text kept (the newest) for one background call's content. */
const OUTPUT_CHARS = 50_000;
/** Background calls followed at once; the oldest is forgotten first. */
const MAX_FOLLOWED = 64;

/** The status of a tool call as ACP says it. */
export type CallStatus = "in_progress" | "completed" | "failed";

/** What one background call shows now: its status and text. */
export interface BackgroundUpdate {
  toolCallId: string;
  status: CallStatus;
  text: string;
}

interface Followed {
  toolCallId: string;
  text: string;
  status: CallStatus;
}

/** The background calls of one ACP session, by shell id. */
export class BackgroundCalls {
  readonly #byShell = new Map<string, Followed>();

  /**
   * A finished call: a background start is followed from now on (its status stays
   * `in_progress`); a read or a kill of a followed shell updates that start's call. Returns the
   * call's own status when it is a background start (else undefined), and the update of the
   * start's call when this read or kill changed it.
   */
  finished(
    call: LLMToolCall,
    result: ToolCallResult | undefined,
  ): { own?: CallStatus; update?: BackgroundUpdate } {
    if (!result) return {};
    const args = call.arguments as Record<string, unknown> | undefined;
    if (call.name === "bash" && args?.run_in_background === true && result.success) {
      const id = /^shell_id: (\S+)/.exec(result.output ?? "")?.[1];
      if (!id) return {};
      const text = `${result.output ?? ""}\n`;
      this.#byShell.set(id, { toolCallId: call.call_id, text, status: "in_progress" });
      const oldest = this.#byShell.keys().next().value;
      if (this.#byShell.size > MAX_FOLLOWED && oldest !== undefined) this.#byShell.delete(oldest);
      return { own: "in_progress" };
    }
    const shell = typeof args?.shell_id === "string" ? args.shell_id.trim() : "";
    const followed = this.#byShell.get(shell);
    if (!followed) return {};
    if (call.name === "kill_shell") {
      if (!result.success) return {};
      // A shell that had exited before the kill keeps its own outcome.
      const exited = /had already exited \(exit code (\d+)\)/.exec(result.output ?? "")?.[1];
      followed.text = joined(
        followed.text,
        exited === undefined ? "[stopped with kill_shell]\n" : `[exited (exit code ${exited})]\n`,
      );
      if (followed.status === "in_progress") {
        followed.status = exited === undefined || exited === "0" ? "completed" : "failed";
      }
    } else if (call.name === "bash_output") {
      const read = readOf(result.output ?? "");
      if (!read) return {};
      followed.text = joined(followed.text, read.text);
      if (followed.status === "in_progress") followed.status = read.status;
    } else {
      return {};
    }
    if (followed.text.length > OUTPUT_CHARS) {
      followed.text = `…${followed.text.slice(-OUTPUT_CHARS)}`;
    }
    return { update: { ...followed } };
  }
}

/** The new output and status in a `bash_output` answer; undefined when it is not one. */
function readOf(output: string): { text: string; status: CallStatus } | undefined {
  const lines = output.split("\n");
  const state = /^status: (running|killed|exited \(exit code (\d+)\))$/.exec(lines[1] ?? "");
  if (!/^shell_id: /.test(lines[0] ?? "") || !state) return undefined;
  const status: CallStatus = state[1] === "running"
    ? "in_progress"
    : state[2] === "0"
    ? "completed"
    : "failed";
  // What the tool says about the read (dropped bytes, hidden characters) is kept beside it.
  const notes = lines.slice(2).filter((line) => /^\[… .* …\]$/.test(line));
  const at = lines.findIndex((line, i) => i > 1 && /^new output( matching .*)?:$/.test(line));
  const text = at < 0 ? "" : lines.slice(at + 1).join("\n");
  return { text: joined(notes.map((note) => `${note}\n`).join(""), text), status };
}

/** `more` after `text`, on a line of its own. */
function joined(text: string, more: string): string {
  if (more === "") return text;
  return text === "" || text.endsWith("\n") ? text + more : `${text}\n${more}`;
}
