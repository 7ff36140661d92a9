/**
 * The slash commands that act on what the session's turns did: `/undo` takes back the last turn's
 * edits through the editor's own history, `/compact` replaces the conversation by the model's
 * summary of it, `/init` drafts an AGENTS.md in one agent turn, `/cost` adds up the tokens.
 */
import { join } from "node:path";
import { BudgetStopError } from "../../agent/budget.ts";
import { ContextManager } from "../../agent/context.ts";
import { runTask, type Session, type TurnRecord } from "../../agent/session.ts";
import { costOf } from "../../llm/prices.ts";
import { addUsage, emptyUsage, type LLMMessage, type LLMUsage } from "../../llm/types.ts";
import {
  keepFile,
  type KeptFile,
  putBack,
  type PutBackOutcome,
  whatIsAt,
} from "../../tools/fs/keep.ts";
import { userConfigPath } from "../../config/trust.ts";
import { terminalLine } from "../../policy/terminal_text.ts";
import type { CallEffect, Tool } from "../../tools/base.ts";
import { catalogEntry } from "../../tools/catalog.ts";
import type { ToolExecutor } from "../../tools/executor.ts";
import type { TrajectoryRecorder } from "../../trajectory/recorder.ts";

/** What the commands here need from the interactive loop. */
export interface TurnCommandContext {
  session: Session;
  conversation: LLMMessage[];
  /** The trajectory of the conversation, once a turn has recorded one. */
  recorder?: Pick<TrajectoryRecorder, "data" | "path" | "recordEvent">;
  write(text: string): void;
  /**
   * Runs `work` as a turn of the loop (its clock on the console, lines typed meanwhile queued,
   * Ctrl-C aborting `signal`); `waiting` is what the spinner says while it runs, for work that
   * shows no progress of its own. Undefined when interrupted. Without it, Ctrl-C (a signal)
   * still stops the work.
   */
  asTurn?<T>(work: (signal: AbortSignal) => Promise<T>, waiting?: string): Promise<T | undefined>;
}

/** One edit `/undo` can take back: the tool that made it (its registered name) and the file. */
export interface UndoStep {
  tool: string;
  path: string;
}

/**
 * What a recorded call did, as its tool says (`tool`, when the session holds it: an MCP tool
 * too), else its catalog entry; undefined when neither can say.
 */
function recordedEffect(call: TurnRecord["calls"][number], tool?: Tool): CallEffect | undefined {
  const args = call.arguments;
  if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
  const given = args as Record<string, unknown>;
  return tool ? tool.effects(given) : catalogEntry(call.name)?.effects?.(given);
}

/**
 * The edits `turn` left on the history stacks of tools that keep one (their catalog entry says
 * how to undo), most recent last: each successful edit pushed one, each successful revert (the
 * model's own `undo_edit`) took the latest of its tool and path back.
 */
export function undoStack(turn: TurnRecord): UndoStep[] {
  const stack: UndoStep[] = [];
  for (const call of turn.calls) {
    const entry = catalogEntry(call.name);
    const effect = recordedEffect(call);
    if (!call.success || !entry?.undo || effect?.kind !== "edit") continue;
    const step = { tool: entry.definition.name, path: effect.path };
    if (!effect.reverts) stack.push(step);
    else {
      const at = stack.findLastIndex((s) => s.tool === step.tool && s.path === step.path);
      if (at >= 0) stack.splice(at, 1);
    }
  }
  return stack;
}

/**
 * The turn's successful calls that may have changed something but keep no history to undo with
 * (commands, edits of tools without an undo, tools that cannot say), counted per tool.
 */
function notUndoable(turn: TurnRecord, executor: ToolExecutor): string[] {
  const counts = new Map<string, number>();
  for (const call of turn.calls) {
    if (!call.success || catalogEntry(call.name)?.undo) continue;
    const tool = executor.find(call.name);
    const kind = recordedEffect(call, tool)?.kind;
    if (kind === "read" || kind === "other") continue;
    const name = tool?.name ?? call.name;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].map(([name, n]) => `${n} ${name} call(s)`);
}

/** The `/undo` calls made so far, to tell them apart (hooks see the id). */
let undoCalls = 0;

/**
 * `/undo`: reverts the edits the last turn's calls made, newest first, through the history of
 * the tools that keep one, each revert a call through the session's gate pipeline.
 */
export async function undoLastTurn(ctx: TurnCommandContext): Promise<void> {
  const turn = ctx.session.turns?.findLast((t) => (t.kind ?? "turn") === "turn");
  if (!turn || turn.undone) {
    ctx.write(
      turn ? "nothing to undo: the last turn's edits were already undone." : "nothing to undo.",
    );
    return;
  }
  const others = notUndoable(turn, ctx.session.executor);
  const untouched = others.length > 0
    ? `\nnot undone (no edit history): ${others.join(", ")}; /diff shows what they changed, ` +
      "and /rewind goes back to the turn's checkpoint, their changes included."
    : "";
  const stack = undoStack(turn).filter((s) => ctx.session.executor.find(s.tool));
  if (stack.length === 0) {
    const keeping = ctx.session.executor.tools.filter((t) => catalogEntry(t.name)?.undo)
      .map((t) => t.name);
    const with_ = keeping.length > 0 ? ` with ${keeping.join(" or ")}` : "";
    ctx.write(`nothing to undo: the last turn made no edits${with_}.${untouched}`);
    return;
  }
  turn.undone = true;
  const failed = new Set<string>();
  const lines: string[] = [];
  for (const { tool, path } of stack.reverse()) {
    const key = `${tool}\0${path}`;
    if (failed.has(key)) continue;
    // The call that undoes an edit comes from the tool's catalog entry, as does its name. It is
    // the user's own call: it passes the session's gates (hooks, deny rules), typed by the user.
    const result = await ctx.session.executor.executeToolCall({
      name: tool,
      call_id: `user-undo-${++undoCalls}`,
      arguments: catalogEntry(tool)!.undo!(path),
      by: "user",
    });
    if (result.error_code !== 0) {
      // Older edits of this file sit under the one that failed: they stay too.
      failed.add(key);
      lines.push(`✗ ${path}: ${result.error ?? "undo failed"}`);
    } else if (/has been removed|no longer exists/.test(result.output ?? "")) {
      lines.push(`removed ${path} (created in that turn)`);
    } else lines.push(`reverted an edit of ${path}`);
  }
  ctx.write(`${lines.join("\n")}${untouched}`);
  ctx.recorder?.recordEvent({ kind: "undo", said: `${lines.join("\n")}${untouched}` });
}

const COMPACT_PROMPT =
  `You summarise a conversation between a user and a coding agent so the agent can go on from the
summary alone. Keep: the user's goals and requests, decisions and constraints, what has been done
(files changed, commands run and their results), what failed and why, open questions and the next
steps. Name files, functions and commands exactly. Leave out greetings and tool output that no
longer matters. Answer with the summary only, in plain text.`;

/** The first words of the message that holds a compacted conversation. */
export const COMPACTED_HEADER = "[Summary of the conversation so far, compacted by /compact]";

/** Characters of one message the summary's transcript keeps (tool output is cut first). */
const TRANSCRIPT_MESSAGE_CHARS = 8000;

/**
 * `/compact [instructions]`: the model summarises the conversation, which is replaced by the
 * summary. PreCompact hooks run first (trigger `manual`, the instructions as
 * `custom_instructions`); one that blocks, or says `continue: false`, leaves it unchanged.
 */
export async function compactConversation(
  ctx: TurnCommandContext & { conversation: LLMMessage[] },
  replace: (conversation: LLMMessage[]) => void,
  instructions = "",
): Promise<void> {
  const body = ctx.conversation.filter((m) => m.role !== "system");
  if (body.length === 0) {
    ctx.write("nothing to compact: the conversation is empty.");
    return;
  }
  const { session } = ctx;
  const hooks = session.hooks;
  if (hooks?.has("PreCompact")) {
    const said = await hooks.preCompact("manual", instructions);
    const stop = hooks.takeStop();
    if (stop || said.block) {
      const why = stop
        ? `PreCompact hook ${stop.by.name} stopped it (continue: false): ${stop.reason}`
        : `PreCompact hook ${said.block!.by.name} blocked it: ${said.block!.reason}`;
      ctx.write(`not compacted: ${why} (the conversation is unchanged)`);
      return;
    }
  }
  const prompt = instructions.trim() === ""
    ? COMPACT_PROMPT
    : `${COMPACT_PROMPT}\n\nThe user asks of this summary: ${instructions.trim()}`;
  const estimate = (messages: readonly LLMMessage[]) =>
    new ContextManager({ window: 1 }).estimate(messages);
  const before = estimate(ctx.conversation);
  const count = ctx.conversation.length;
  // Within the session's budget: refused at a cap reached, its spend counted when it answers.
  const client = session.budget?.meter(session.client) ?? session.client;
  let response;
  try {
    response = await (ctx.asTurn ?? interruptible)(
      (signal) =>
        client.chat(
          [{ role: "system", content: prompt }, { role: "user", content: transcript(body) }],
          [],
          signal,
        ),
      "/compact · the model summarises the conversation",
    );
  } catch (e) {
    if (!(e instanceof BudgetStopError)) throw e;
    ctx.write(`not compacted: ${e.message} (the conversation is unchanged)`);
    return;
  }
  if (response === undefined) {
    ctx.write("interrupted: the conversation is unchanged.");
    return;
  }
  recordUsage(session, response.usage, "compact");
  // The trajectory's budget record holds the summary's spend (written with the compaction).
  if (session.budget && ctx.recorder) ctx.recorder.data.budget = session.budget.record();
  const summary = response.content.trim();
  if (summary === "") {
    ctx.write("the model's summary was empty: the conversation is unchanged.");
    return;
  }
  const system = ctx.conversation.find((m) => m.role === "system");
  const compacted: LLMMessage[] = [
    ...(system ? [system] : []),
    { role: "user", content: `${COMPACTED_HEADER}\n\n${summary}` },
    {
      role: "assistant",
      content: "Understood: I will go on from this summary of our conversation.",
    },
  ];
  replace(compacted);
  ctx.write(
    `compacted the conversation: ${count} → ${compacted.length} message(s), ` +
      `about ${before} → ${estimate(compacted)} tokens.`,
  );
}

/** The conversation as text for the summariser, each long message cut in the middle. */
function transcript(messages: readonly LLMMessage[]): string {
  const cut = (text: string) =>
    text.length <= TRANSCRIPT_MESSAGE_CHARS
      ? text
      : `${text.slice(0, TRANSCRIPT_MESSAGE_CHARS / 2)}\n[… ${
        text.length - TRANSCRIPT_MESSAGE_CHARS
      } characters left out …]\n${text.slice(-TRANSCRIPT_MESSAGE_CHARS / 2)}`;
  return messages.map((m) => {
    if (m.role === "tool") {
      return `[tool result: ${m.name}${m.is_error ? ", failed" : ""}]\n${cut(m.content)}`;
    }
    const calls = m.role === "assistant" && m.tool_calls?.length
      ? `\n${
        m.tool_calls.map((c) => `[tool call: ${c.name} ${cut(JSON.stringify(c.arguments))}]`)
          .join("\n")
      }`
      : "";
    return `[${m.role}]\n${cut(m.content)}${calls}`;
  }).join("\n\n");
}

/** Runs `work` with Ctrl-C aborting it; undefined when it was interrupted. */
async function interruptible<T>(
  work: (signal: AbortSignal) => Promise<T>,
  _waiting?: string,
): Promise<T | undefined> {
  const controller = new AbortController();
  const stop = () => controller.abort(new Error("interrupted"));
  Deno.addSignalListener("SIGINT", stop);
  try {
    return await work(controller.signal);
  } catch (e) {
    if (controller.signal.aborted) return undefined;
    throw e;
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
  }
}

function recordUsage(session: Session, usage: LLMUsage, kind: TurnRecord["kind"]): void {
  const { provider, settings } = session.config.model;
  (session.turns ??= []).push({
    provider: provider.provider,
    model: settings.model,
    usage,
    calls: [],
    kind,
  });
}

/** Where `/init` drafts: AGENTS.md when there is none, else the first free AGENTS.draft[-N].md. */
export async function initTarget(workspace: string): Promise<{ path: string; draft: boolean }> {
  const agents = join(workspace, "AGENTS.md");
  if (!await exists(agents)) return { path: agents, draft: false };
  for (let n = 1;; n++) {
    const path = join(workspace, n === 1 ? "AGENTS.draft.md" : `AGENTS.draft-${n}.md`);
    if (!await exists(path)) return { path, draft: true };
  }
}

/** The task `/init` gives the model. */
export function initPrompt(target: string, draft: boolean): string {
  return [
    `Write a draft AGENTS.md for this repository to the file ${target} (create it with ` +
    "str_replace_based_edit_tool's `create`). It is read by coding agents before they work here.",
    "First look around: the README, the build and package files, the test setup, CI, the layout " +
    "of the source folders and any contributor docs.",
    "Then write, in short Markdown sections: what the project is; how to build, run, lint and " +
    "test it (exact commands); the code layout; the conventions a change must follow; anything " +
    "surprising. Only what you verified in the repository; no guesses, no filler.",
    draft
      ? "AGENTS.md already exists: read it, but do not change it; write your draft only to " +
        `${target}.`
      : "",
    "Change no other file. When the file is written, answer with one line saying so.",
  ].filter((l) => l !== "").join("\n");
}

/** `/init`: one agent turn that drafts AGENTS.md (or a draft beside it), then says where. */
export async function initAgentsFile(ctx: TurnCommandContext): Promise<void> {
  const { session } = ctx;
  if (!session.workplace.onHost) {
    ctx.write("/init works on a host workspace; this session's tools run in a container.");
    return;
  }
  const { path, draft } = await initTarget(session.workspace);
  const agents = join(session.workspace, "AGENTS.md");
  // Kept without following a link or opening a pipe: the repository may have made AGENTS.md
  // anything, and the model may change it during the turn.
  const kept = draft ? keepFile(agents) : undefined;
  const notice = kept && keptNotice(agents, kept);
  if (notice) ctx.write(notice);
  ctx.write(`drafting ${shown(path)} (one agent turn; Ctrl-C stops it)…`);
  // A helper of the conversation it was typed in: pickers and --continue skip it.
  const parent = ctx.recorder;
  const ran = await (ctx.asTurn ?? interruptible)((signal) =>
    runTask(session, initPrompt(path, draft), {
      signal,
      conversation: [],
      textEndsTurn: true,
      recordedTask: "/init",
      helperOf: {
        command: "/init",
        session_id: parent?.data.session_id ?? null,
        path: parent?.path ?? null,
      },
    })
  );
  if (kept) {
    const said = putBackNotice(agents, kept, await putBack(agents, kept));
    if (said) ctx.write(said);
  }
  if (ran === undefined || ran.result.interrupted) {
    ctx.write(
      (await exists(path))
        ? `interrupted: ${shown(path)} may be unfinished.`
        : "interrupted: nothing written.",
    );
    return;
  }
  const made = whatIsAt(path);
  if (made === "missing") {
    ctx.write(`the model did not write ${shown(path)}; try /init again or write it yourself.`);
    return;
  }
  if (made !== "a regular file") {
    // Not followed or read: the model may have pointed it anywhere.
    ctx.write(
      `the model made ${shown(path)} ${shown(made)}, not a file; Deft left it as it is and did ` +
        "not read it. Remove it, then try /init again or write it yourself.",
    );
    return;
  }
  ctx.write(
    draft
      ? `drafted ${shown(path)}: compare it with AGENTS.md and merge what you want.`
      : `drafted ${shown(path)}: review it; new sessions read it as project instructions.`,
  );
}

/** What `/init` says before the turn about an AGENTS.md it cannot keep a copy of. */
function keptNotice(agents: string, kept: KeptFile): string | undefined {
  if (kept.kind === "symlink") {
    return `${shown(agents)} is a symbolic link to ${shown(kept.target)}: Deft does not read ` +
      "through it; if the model changes it, the link itself is put back.";
  }
  if (kept.kind === "other") {
    return `${shown(agents)} is ${kept.what}, not a file Deft reads (${kept.reason}): no copy ` +
      "is kept, so if the model changes it, it cannot be put back.";
  }
  return undefined;
}

/** What `/init` says after the turn about putting AGENTS.md back; undefined when unchanged. */
function putBackNotice(
  agents: string,
  kept: KeptFile,
  outcome: PutBackOutcome,
): string | undefined {
  const name = shown(agents);
  if (outcome.done === "unchanged") return undefined;
  const what = outcome.found === "missing"
    ? `the model deleted ${name}`
    : outcome.found === "a regular file"
    ? `the model changed ${name}`
    : `the model replaced ${name} by ${shown(outcome.found)}`;
  if (outcome.done === "refused") {
    return `${what}; it was not put back: ${shown(outcome.why ?? "")}. Check it yourself ` +
      "(`git status`, `git checkout -- AGENTS.md`).";
  }
  if (kept.kind === "symlink") {
    return `${what}: the symbolic link to ${shown(kept.target)} is put back as it was (its ` +
      "target was neither read nor written).";
  }
  const through = outcome.found.startsWith("a symbolic link")
    ? " (replacing the link; nothing was written through it)"
    : "";
  return `${what}: it is put back as it was${through}.`;
}

/** A path or name from the workspace, safe to print on one line. */
function shown(text: string): string {
  return terminalLine(text);
}

/** `/cost`: tokens and cost per turn and in total, then the spend against each budget cap. */
export function costReport(session: Session): string {
  const caps = session.budget?.describe() ?? [];
  return [turnCosts(session), ...caps].join("\n");
}

function turnCosts(session: Session): string {
  const turns = session.turns ?? [];
  if (turns.length === 0) return "no model calls yet in this session.";
  const total = emptyUsage();
  let totalCost: number | null = 0;
  const unpriced = new Set<string>();
  let n = 0;
  const lines = turns.map((turn) => {
    addUsage(total, turn.usage);
    const cost = costOf(turn.usage, turn.provider, turn.model, session.config.prices);
    if (cost === null) unpriced.add(turn.model);
    else if (totalCost !== null) totalCost += cost;
    const label = turn.kind === "compact"
      ? "/compact"
      : turn.kind === "summaries"
      ? "summaries"
      : `turn ${++n}`;
    return `${label.padEnd(10)}${tokens(turn.usage)}  ${money(cost)}  ${turn.model}`;
  });
  if (unpriced.size > 0) totalCost = null;
  lines.push(`${"total".padEnd(10)}${tokens(total)}  ${money(totalCost)}`);
  if (unpriced.size > 0) {
    lines.push(
      `no price known for ${[...unpriced].join(", ")}: set one with the \`prices\` key ` +
        `in your config (${userConfigPath() ?? "~/.config/deft/config.yaml"}; USD per ` +
        "million tokens).",
    );
  }
  return lines.join("\n");
}

function tokens(usage: LLMUsage): string {
  const cached = usage.cache_read_input_tokens > 0
    ? ` (${usage.cache_read_input_tokens} cached)`
    : "";
  return `${usage.input_tokens} in${cached}, ${usage.output_tokens} out`;
}

function money(cost: number | null): string {
  return cost === null ? "$?" : `$${cost.toFixed(4)}`;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/**
 * After `/rewind`: when it went back (a rewind recorded after the first `rewindsBefore`), the
 * background shells started in the turns it took back — after its checkpoint was taken — are
 * killed, with their process groups; those of the turns kept run on. Whatever was restored
 * (files, conversation or both): the turns that started them are no longer the session's.
 */
export async function endTakenBackShells(
  ctx: TurnCommandContext,
  rewindsBefore: number,
): Promise<void> {
  const data = ctx.recorder?.data;
  const done = data?.rewinds?.slice(rewindsBefore).at(-1);
  const target = done && data?.checkpoints?.find((c) => c.id === done.to_checkpoint);
  if (!target) return;
  const ended = await ctx.session.executor.takeBack(target.time);
  if (ended.length === 0) return;
  ctx.write(
    `ended the background shells the turns after turn ${target.turn} started:\n` +
      ended.map((line) => `  ${terminalLine(line)}`).join("\n"),
  );
}
