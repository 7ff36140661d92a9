/**
 * The agent console of an ACP session: what `deft run` shows on a terminal becomes
 * `session/update` notifications. Streamed text is an `agent_message_chunk`; each tool call is a
 * `tool_call` (its kind, title and locations from its description in the catalog) and, once it
 * ran, a `tool_call_update` (completed or failed; an edit as a diff block, other output as text);
 * thoughts (a call described with one) are the session's `plan`. A background shell's call stays
 * open and grows with what `bash_output` reads of it (background.ts). Notes go to stderr: stdout
 * is the protocol's.
 */
import { isAbsolute, resolve } from "node:path";
import type { AgentConsole } from "../agent/console.ts";
import { BackgroundCalls } from "./background.ts";
import type { LLMToolCall } from "../llm/types.ts";
import type { CallEffect } from "../tools/base.ts";
import { type CallDescription, describeCall } from "../tools/catalog.ts";
import type { ToolCallResult } from "../tools/executor.ts";
import { maskOutput } from "../policy/secrets.ts";
import { readWorkspaceFile } from "../tools/fs/workspace_read.ts";

/** The session updates this console sends (a subset of the protocol's `SessionUpdate`). */
export type Update = Record<string, unknown> & { sessionUpdate: string };

/** The largest file whose text goes into a diff block; a larger one is shown as text. */
const DIFF_BYTES = 1024 * 1024;
/** The most text of one tool result sent to the client. */
const OUTPUT_CHARS = 50_000;

/** One call the console has announced and not yet seen finish. */
export interface OpenCall {
  call: LLMToolCall;
  /** How the call is shown, by the catalog (or, for a tool outside it, by its effect). */
  description: CallDescription;
  /** An edit's file: its absolute path and its text before the call (null: no such file). */
  file?: { path: string; before: string | null } | "unreadable";
}

/** What the console needs from its session: how to send, and what a call does. */
export interface AcpConsoleOptions {
  /** Sends one update (in order; the caller queues them). */
  send(update: Update): void;
  /** The call's effect by the tool's catalog entry (undefined: the tool cannot say). */
  effects(call: LLMToolCall): CallEffect | undefined;
  /** The workspace: relative paths resolve against it. */
  workspace(): string;
  /** False when the tools run in a container: its files are not readable here. */
  hostFiles(): boolean;
  /** Writes a line of diagnostics (stderr). */
  note(text: string): void;
  /**
   * The edit the last call made to `path` through the client's file system (its buffer's text
   * before and after), taken once; undefined when it went to disk.
   */
  clientEdit?(path: string): { before: string; after: string } | undefined;
}

/** Text sent to the client: secrets masked as the trajectory masks them. */
function masked(text: string): string {
  return maskOutput(text);
}

function clip(text: string, max = OUTPUT_CHARS): string {
  return text.length > max
    ? `${text.slice(0, max)}\n… (${text.length - max} more characters)`
    : text;
}

/** The console; one per ACP session, its turns one after another. */
export class AcpConsole implements AgentConsole {
  readonly #open = new Map<string, OpenCall>();
  readonly #plan: { content: string; status: string }[] = [];
  readonly #background = new BackgroundCalls();
  /** The text streamed in the current turn (to tell whether the final answer was shown). */
  streamed = "";

  constructor(private readonly opts: AcpConsoleOptions) {}

  /** A turn starts: nothing of the last one is pending. */
  beginTurn(): void {
    this.streamed = "";
    this.#open.clear();
  }

  /** The calls announced and not yet finished, oldest first (the approval asks about one). */
  openCalls(): OpenCall[] {
    return [...this.#open.values()];
  }

  text(delta: string): void {
    if (delta === "") return;
    this.streamed += delta;
    this.opts.send({
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: masked(delta) },
    });
  }

  calling(_step: number, calls: LLMToolCall[]): void {
    for (const call of calls) {
      let effect: CallEffect | undefined;
      try {
        effect = this.opts.effects(call);
      } catch {
        effect = undefined;
      }
      const description = describeCall(call.name, call.arguments, effect);
      const open: OpenCall = { call, description };
      const absolute = (path: string) =>
        isAbsolute(path) ? path : resolve(this.opts.workspace(), path);
      const locations = description.locations.map((l) => ({ ...l, path: absolute(l.path) }));
      if (description.diff) {
        const path = absolute(description.diff.path);
        const read = this.#readText(path);
        open.file = read ? { path, before: read.before } : "unreadable";
      }
      this.#open.set(call.call_id, open);
      this.opts.send({
        sessionUpdate: "tool_call",
        toolCallId: call.call_id,
        title: masked(description.title),
        kind: description.kind,
        status: "pending",
        locations,
        rawInput: call.arguments,
      });
    }
  }

  step(_step: number, calls: LLMToolCall[], results: ToolCallResult[], _text: string): void {
    calls.forEach((call, i) => {
      const open = this.#open.get(call.call_id);
      this.#open.delete(call.call_id);
      if (!open) return;
      const result = results[i];
      const success = result?.success === true;
      const content: unknown[] = [];
      const file = open.file;
      const diff = open.description.diff;
      const viaClient = success && diff ? this.opts.clientEdit?.(diff.path) : undefined;
      if (viaClient && file && file !== "unreadable") {
        content.push({
          type: "diff",
          path: file.path,
          oldText: masked(viaClient.before),
          newText: masked(viaClient.after),
        });
      } else if (success && file && file !== "unreadable") {
        const after = this.#readText(file.path);
        if (after && after.before !== null) {
          content.push({
            type: "diff",
            path: file.path,
            oldText: file.before === null ? null : masked(file.before),
            newText: masked(after.before),
          });
        }
      }
      if (content.length === 0) {
        const text = result
          ? (success ? result.output ?? "" : result.error ?? result.output ?? "failed")
          : "no result";
        if (text !== "") {
          content.push({ type: "content", content: { type: "text", text: masked(clip(text)) } });
        }
      }
      const background = this.#background.finished(call, result);
      this.opts.send({
        sessionUpdate: "tool_call_update",
        toolCallId: call.call_id,
        status: background.own ?? (success ? "completed" : "failed"),
        content,
      });
      const grown = background.update;
      if (grown) {
        this.opts.send({
          sessionUpdate: "tool_call_update",
          toolCallId: grown.toolCallId,
          status: grown.status,
          content: [{ type: "content", content: { type: "text", text: masked(grown.text) } }],
        });
      }
      const thought = open.description.thought;
      if (thought && success) this.#thought(thought);
    });
  }

  /** A thought becomes an entry of the session's plan, in progress while more are to come. */
  #thought(thought: { text: string; more: boolean }): void {
    for (const entry of this.#plan) entry.status = "completed";
    this.#plan.push({ content: thought.text, status: thought.more ? "in_progress" : "completed" });
    this.opts.send({
      sessionUpdate: "plan",
      entries: this.#plan.map((e) => ({
        content: masked(e.content),
        priority: "medium",
        status: e.status,
      })),
    });
  }

  /** The text of a workspace file (null: none), undefined when it cannot be shown. */
  #readText(path: string): { before: string | null } | undefined {
    if (!this.opts.hostFiles()) return undefined;
    try {
      const bytes = readWorkspaceFile(this.opts.workspace(), path, DIFF_BYTES);
      if (bytes === undefined) return undefined;
      if (bytes === null) return { before: null };
      return { before: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
    } catch {
      return undefined;
    }
  }

  note(message: string): void {
    this.opts.note(message);
  }

  summary(): void {}
}
