/**
 * One run as HTML: the header, the timeline of steps (the model's text, each tool call folded to
 * one line with its arguments and output inside, edits as coloured diffs, failures and the user's
 * denials marked, tokens and seconds per step), and the final patch. Every string from the run goes
 * through escape.ts.
 */
import type { RecordedStep, RecordedToolResult } from "../trajectory/recorder.ts";
import type { LLMToolCall } from "../llm/types.ts";
import { type AskedChange, describeCall } from "../tools/catalog.ts";
import { block, BLOCK_LIMITS, type BlockLimits, text } from "./escape.ts";
import { backgroundLanes } from "./lanes.ts";
import { networkLimits, networkSection, networkSummary, stepNetwork } from "./network.ts";
import { approvalWords, conversationStats, type RunModel, runOutcome, runStats } from "./model.ts";
import {
  type ConversationPart,
  eventBlock,
  timeline,
  type TimelineItem,
  workingSeconds,
} from "./timeline.ts";

/** How a number of seconds reads: `42.1 s`, `3 min 5 s`. */
export function seconds(value: number | null | undefined): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return "—";
  if (value < 60) return `${value.toFixed(1)} s`;
  return `${Math.floor(value / 60)} min ${Math.round(value % 60)} s`;
}

/** US dollars, or a dash when unknown. */
export function dollars(value: number | null | undefined): string {
  return typeof value === "number" && Number.isFinite(value) ? `$${value.toFixed(4)}` : "—";
}

/** A count, or a dash when unknown. */
export function count(value: number | null | undefined): string {
  return typeof value === "number" && Number.isFinite(value) ? value.toLocaleString("en-US") : "—";
}

/** A status as a coloured badge (the class comes from a fixed list, never from the data). */
export function badge(status: string): string {
  const known = ["passed", "completed", "failed", "error", "timeout", "interrupted", "unfinished"];
  const cls = known.includes(status) ? `s-${status}` : "";
  return `<span class="badge ${cls}">${text(status)}</span>`;
}

/** Coloured lines of a unified diff. */
export function diffBlock(patch: string, limits: BlockLimits = BLOCK_LIMITS): string {
  const lines = patch.length > limits.total
    ? patch.slice(0, limits.total).split("\n")
    : patch.split("\n");
  const out = lines.map((line) => {
    const cls = line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")
      ? "file"
      : line.startsWith("+")
      ? "add"
      : line.startsWith("-")
      ? "del"
      : line.startsWith("@@")
      ? "hunk"
      : "";
    const shown = block(line, { line: limits.line, total: limits.line + 1 });
    return cls ? `<span class="${cls}">${shown}</span>` : shown;
  });
  if (patch.length > limits.total) {
    out.push(`<span class="cut">… ${patch.length - limits.total} more characters cut</span>`);
  }
  return `<pre class="diff">${out.join("\n")}</pre>`;
}

/** The one line a folded tool call shows beside the tool's name. */
export function callLine(call: LLMToolCall): string {
  return describeCall(call.name, call.arguments).subject;
}

function prefixed(content: string, sign: "+" | "-", limits: BlockLimits): string {
  // Only what the block can show is split into lines: a huge text costs no more than that.
  const shown = content.length > limits.total ? content.slice(0, limits.total) : content;
  return shown.split("\n").map((l) => sign + l).join("\n");
}

/** The change a call asked for, as the lines of a diff headed by the file. */
function askedDiff(path: string, change: AskedChange, limits: BlockLimits): string {
  const heading = `--- ${path}\n+++ ${path}\n`;
  switch (change.kind) {
    case "create":
      return heading + prefixed(change.text, "+", limits);
    case "replace":
      return heading + prefixed(change.old, "-", limits) +
        (change.new ? "\n" + prefixed(change.new, "+", limits) : "");
    case "insert":
      return `${heading}@@ after line ${change.afterLine}\n${prefixed(change.text, "+", limits)}`;
  }
}

/** A tool call's arguments: an edit as a coloured diff, anything else as JSON. */
export function callArguments(call: LLMToolCall, limits: BlockLimits): string {
  const described = describeCall(call.name, call.arguments);
  // A call whose line shows all its arguments (a one-line command) needs no block.
  if (described.saysAll) return "";
  const diff = described.diff;
  if (diff?.change) return diffBlock(askedDiff(diff.path, diff.change, limits), limits);
  return `<pre>${block(JSON.stringify(call.arguments ?? null, null, 2), limits)}</pre>`;
}

/** True when the user refused this call (the agent records the denial as the call's error). */
export function denied(result: RecordedToolResult | undefined): boolean {
  return /^The user denied this /.test(result?.error ?? result?.result ?? "");
}

/**
 * A run's child agents, and those already drawn in this report: a file may name one child from
 * any number of calls (and so at every level), which would draw it that many times over.
 */
interface Nesting {
  children: RunModel["children"];
  drawn: Set<RunModel>;
}

function toolCall(
  call: LLMToolCall,
  result: RecordedToolResult | undefined,
  limits: BlockLimits,
  nesting: Nesting,
): string {
  const failed = result ? !result.success : false;
  // Who let the call through or refused it; older files record no decision, only the refusal.
  // What the approval mode let through unasked is the default, said once in the header.
  const approval = byMode(result) ? undefined : approvalWords(result);
  const marks = [
    approval
      ? `<span class="badge approval${approval.denied ? " warn" : ""}">${
        text(approval.words)
      }</span>`
      : denied(result)
      ? `<span class="badge warn">denied</span>`
      : "",
    failed && !denied(result) ? `<span class="badge bad">failed</span>` : "",
    result ? "" : `<span class="badge warn">no result</span>`,
  ].join(" ");
  const output = result
    ? [
      result.result ? `<pre class="out">${block(result.result, limits)}</pre>` : "",
      result.error ? `<pre class="out err">${block(result.error, limits)}</pre>` : "",
    ].join("")
    : "";
  return `<details class="call fold${failed ? " bad" : ""}" open><summary><span class="tool">${
    text(call.name)
  }</span> <span class="mono">${text(callLine(call))}</span> ${marks}</summary>${
    callArguments(call, limits)
  }${output}${childAgent(result, nesting, limits)}</details>`;
}

/** The child agent a `Task` call ran: its own header and steps, nested in the call. */
function childAgent(
  result: RecordedToolResult | undefined,
  nesting: Nesting,
  limits: BlockLimits,
): string {
  const link = result?.subagent;
  if (!link || typeof link.trajectory !== "string") return "";
  // A string: why the child is not shown (children.ts).
  const found = nesting.children?.get(link.trajectory);
  const child = typeof found === "string" ? undefined : found;
  const again = child !== undefined && nesting.drawn.has(child);
  if (child) nesting.drawn.add(child);
  const shown = !child
    ? `<p class="note">${
      text(typeof found === "string" ? found : "not shown: its trajectory was not read")
    }: ${text(link.trajectory)}</p>`
    : again
    ? `<p class="note">its steps are shown under the first call that names it ` +
      `(${text(link.trajectory)})</p>`
    : runSection(child, limits, nesting.drawn);
  return `<details class="child fold" open><summary>child agent <span class="mono">${
    text(String(link.session_id ?? ""))
  }</span>${child ? " " + badge(runOutcome(child)) : ""}</summary>${shown}</details>`;
}

/** True when the approval mode let the call through without asking: the default, no badge. */
export function byMode(result: RecordedToolResult | undefined): boolean {
  const a = result?.approval as { decision?: unknown; decided_by?: unknown } | undefined;
  return !!a && typeof a === "object" && a.decided_by === "mode" && a.decision === "allow";
}

/** A size in bytes as a person reads it: `812 bytes`, `9.4 KB`, `3.2 MB`. */
export function byteSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} KB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

function step(
  s: RecordedStep,
  elapsed: number | null,
  limits: BlockLimits,
  nesting: Nesting,
  network = "",
): string {
  const usage = s.llm_response?.usage;
  const tokens = usage && typeof usage === "object"
    ? `${count(usage.input_tokens)} in / ${count(usage.output_tokens)} out`
    : "";
  const recorded = objects<RecordedToolResult>(s.tool_results);
  const bad = s.state !== "completed" || recorded.some((r) => !r.success);
  const results = new Map(recorded.map((r) => [r.call_id, r]));
  const calls = objects<LLMToolCall>(s.tool_calls ?? s.llm_response?.tool_calls);
  return `<div class="step${bad ? " bad" : ""}"><h4>Step ${
    text(s.step_number)
  } <span class="meta">${
    [tokens, elapsed === null ? "" : seconds(elapsed)].filter(Boolean).join(" · ")
  }</span>${
    s.state !== "completed" ? " " + badge(s.state === "error" ? "error" : s.state) : ""
  }</h4>${
    s.lakeview && typeof s.lakeview === "object"
      ? `<p class="note">${text(s.lakeview.tag)}: ${text(s.lakeview.summary)}</p>`
      : ""
  }${
    s.llm_response?.content
      ? `<div class="says">${block(s.llm_response.content, limits)}</div>`
      : ""
  }${calls.map((c) => toolCall(c, results.get(c.call_id), limits, nesting)).join("")}${network}${
    s.error ? `<pre class="out err">${block(s.error, limits)}</pre>` : ""
  }${s.reflection ? `<p class="note">${block(s.reflection, limits)}</p>` : ""}</div>`;
}

// A trajectory is data from disk: a list that is not one, or holes in it, are skipped.
function objects<T>(value: unknown): T[] {
  return Array.isArray(value) ? value.filter((v) => v !== null && typeof v === "object") : [];
}

/** The header and timeline of `run`, under the anchor `anchor`. */
export function runSection(
  run: RunModel,
  limits: BlockLimits = BLOCK_LIMITS,
  drawn: Set<RunModel> = new Set([run]),
): string {
  const t = run.trajectory;
  const stats = runStats(run);
  const usage = t?.total_usage;
  const container = t?.container
    ? `container ${t.container.runtime} ${t.container.image ?? ""} ${
      String(t.container.id).slice(0, 12)
    }`
    : t
    ? "host"
    : "—";
  const rows: [string, string][] = [
    ["task", t ? block(t.task, limits) : "—"],
    ["model", t ? `${text(t.provider)} / ${text(t.model)}` : "—"],
    [
      "outcome",
      `${badge(run.result?.status ?? runOutcome(run))}${
        run.result ? " " + badge(runOutcome(run)) : ""
      }`,
    ],
    ["steps", `${count(stats.steps)}${t ? ` of at most ${count(t.max_steps)}` : ""}`],
    [
      "tokens",
      usage
        ? `${count(usage.input_tokens)} in, ${count(usage.output_tokens)} out, ${
          count(usage.cache_read_input_tokens)
        } cache read`
        : "—",
    ],
    [
      "cost",
      dollars(stats.cost) +
      (stats.cost !== null && typeof run.result?.cost !== "number" ? " at list prices" : ""),
    ],
    ["wall time", seconds(stats.seconds)],
    ["where", text(container)],
    ["started", text(t?.start_time ?? run.result?.started_at ?? "—")],
    ["session", text(t?.session_id ?? "—")],
    ["file", text(run.path)],
  ];
  if (run.result?.error) rows.push(["error", block(run.result.error, limits)]);
  if (t?.parent && typeof t.parent === "object") {
    rows.push([
      "parent",
      `a child agent of session ${text(String(t.parent.session_id ?? "—"))} (${
        text(String(t.parent.trajectory ?? "—"))
      })`,
    ]);
  }
  if (run.parts) wholeConversation(rows, run.parts, limits);
  const head = (more: [string, string][] = []) =>
    `<dl class="head">${
      [...rows, ...more].map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")
    }</dl>`;
  if (!t) {
    return `${head()}<p class="note">${text(run.problem ?? "no trajectory")}</p>${
      patchSection(run, limits)
    }`;
  }
  const items = timeline(run.parts ?? [{ path: run.path, trajectory: t }]);
  const network = networkSummary(
    (run.parts ?? [{ trajectory: t }]).map((p) => p.trajectory.network),
    items.flatMap((item) => item.kind === "step" ? [item.step] : []),
    (run.parts ?? [{ trajectory: t }]).map((p) => p.trajectory.network_not_recorded),
  );
  const steps = items.map((item) =>
    item.kind === "step"
      ? step(
        item.step,
        item.elapsed,
        limits,
        { children: run.children, drawn },
        stepNetwork(network, item.step),
      )
      : eventBlock(item, limits)
  ).join("\n");
  const final = t.final_result
    ? `<h4>Final answer</h4><div class="says">${block(t.final_result, limits)}</div>`
    : "";
  const lanes = backgroundLanes(
    items.flatMap((item) => item.kind === "step" ? [item.step] : []),
    t.end_time,
  );
  return `${head(conversationRows(run, items))}${lanes}${
    networkSection(network, networkLimits(limits))
  }<h4>Timeline</h4>${steps || `<p class="note">no steps recorded</p>`}${final}${
    patchSection(run, limits)
  }`;
}

/** The header's numbers for a conversation over several files: from the first, or added up. */
function wholeConversation(
  rows: [string, string][],
  parts: readonly ConversationPart[],
  limits: BlockLimits,
): void {
  const total = conversationStats(parts);
  const first = parts[0].trajectory;
  const set = (key: string, value: string) => {
    const row = rows.find(([k]) => k === key);
    if (row) row[1] = value;
  };
  set("task", block(first.task, limits));
  set("steps", `${count(total.steps)} in ${parts.length} files`);
  set(
    "tokens",
    `${count(total.usage.input_tokens)} in, ${count(total.usage.output_tokens)} out, ${
      count(total.usage.cache_read_input_tokens)
    } cache read`,
  );
  set("cost", total.cost === null ? "—" : `${dollars(total.cost)} at list prices`);
  set("wall time", `${seconds(total.seconds)} summed over the files`);
  set("started", text(first.start_time));
}

/**
 * The header rows a conversation adds: its files (when /compact spread it over several), the time
 * its steps took (the user's time between turns left out), and what the approval mode let
 * through unasked (those calls carry no mark).
 */
function conversationRows(run: RunModel, items: readonly TimelineItem[]): [string, string][] {
  const rows: [string, string][] = [];
  if (run.parts) {
    rows.push([
      "conversation",
      `${run.parts.length} files, a new one after each /compact: ${
        run.parts.map((p) => text(p.trajectory.session_id ?? p.path)).join(", ")
      }`,
    ]);
  }
  // With one prompt the steps' time is the wall time, less the start.
  const turns = items.filter((i) => i.kind === "prompt").length;
  if (turns > 1) {
    rows.push([
      "time working",
      `${seconds(workingSeconds(items))} over ${count(turns)} prompts, the time between turns ` +
      "left out",
    ]);
  }
  const modes = new Map<string, number>();
  for (const item of items) {
    if (item.kind !== "step") continue;
    for (const r of objects<RecordedToolResult>(item.step.tool_results)) {
      if (!byMode(r)) continue;
      const mode = String((r.approval as { mode?: unknown }).mode ?? "?");
      modes.set(mode, (modes.get(mode) ?? 0) + 1);
    }
  }
  if (modes.size > 0) {
    rows.push([
      "approvals",
      `${
        [...modes].map(([mode, n]) => `${count(n)} call(s) let through by mode ${text(mode)}`)
          .join(", ")
      } without asking; a call someone decided on is marked`,
    ]);
  }
  return rows;
}

function patchSection(run: RunModel, limits: BlockLimits): string {
  if (run.patch === null) return "";
  if (!run.patch.trim()) return `<h4>Patch</h4><p class="note">the run changed nothing</p>`;
  return `<h4>Patch</h4>${
    diffBlock(run.patch, { line: limits.line, total: Math.max(limits.total, 200_000) })
  }`;
}
