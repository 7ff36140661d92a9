/**
 * Approvals over ACP: the approval gate (src/gate/approval.ts) shows its question and asks for an
 * answer line, as on a terminal; here the question becomes a `session/request_permission` and
 * the option the client picks becomes the line the gate understands. Allow once is `y`, allow
 * always is `a` (the terminal's scope: that command prefix, that file, that tool), reject once is
 * `n` (the model reads the refusal as on a terminal), reject always is `n` now and for every later
 * question of the same scope, unasked. No answer (the client cancelled, the turn was cancelled,
 * the connection closed) refuses the call. Any other question (trusting a repository's config)
 * gets no answer: an editor is not asked to widen what a repository may configure.
 */
import type { AskUser } from "../gate/question.ts";
import type { AcpConsole, OpenCall } from "./console.ts";
import { maskOutput } from "../policy/secrets.ts";

/** The answer the client picked, or null: no answer. */
export type PermissionAnswer = "allow_once" | "allow_always" | "reject_once" | "reject_always";

const ANSWERS: readonly string[] = ["allow_once", "allow_always", "reject_once", "reject_always"];

/** Whether the client's option id is one of Deft's answers. */
export function isPermissionAnswer(id: string): id is PermissionAnswer {
  return ANSWERS.includes(id);
}

/** One question as the gate showed it. */
export interface ApprovalQuestion {
  kind: string;
  /** What the user judges: the command, or the edit as a diff. */
  show: string;
  /** The scope "always" covers, when offered (e.g. "`git push` commands"). */
  always?: string;
}

/** Reads the gate's question back from the lines it showed. */
export function parseQuestion(text: string): ApprovalQuestion | undefined {
  const lines = text.replace(/^\n/, "").split("\n");
  const head = /^Approve this (.+)\?$/.exec(lines[0] ?? "");
  if (!head || lines.length < 3) return undefined;
  const choices = lines.at(-1)!;
  const always = /\[a\]lways for (.+?) · \[s\]ession/.exec(choices)?.[1];
  return { kind: head[1], show: lines.slice(1, -1).join("\n"), always };
}

/** What the asker needs from its session. */
export interface PermissionOptions {
  console: AcpConsole;
  /** Asks the client; resolves to the option picked, null when nobody answered. */
  request(toolCall: Record<string, unknown>, always: boolean): Promise<PermissionAnswer | null>;
  /** Writes a line of diagnostics (stderr). */
  note(text: string): void;
  /**
   * The client's text of a file the editor edits through the client (its buffer), undefined
   * when edits go to disk; the diff asked about is then the buffer's.
   */
  bufferText?(path: string): Promise<string | undefined>;
}

/** The asker and the `write` the gate shows its question with. */
export class PermissionAsker {
  #shown: ApprovalQuestion | undefined;
  readonly #asked = new Set<string>();
  readonly #rejected = new Set<string>();

  constructor(private readonly opts: PermissionOptions) {}

  /** The gate's `write`: an approval question is kept for `ask`, anything else is a note. */
  readonly write = (text: string): void => {
    const question = parseQuestion(text);
    if (question) this.#shown = question;
    else this.opts.note(text);
  };

  /** The gate's asker. */
  readonly ask: AskUser = Object.assign(
    (prompt: string) => this.#answer(prompt),
    { tell: (text: string) => this.opts.note(text) },
  );

  async #answer(prompt: string): Promise<string | null> {
    const question = this.#shown;
    this.#shown = undefined;
    if (prompt !== "approve> " || !question) return null;
    const scope = question.always ?? `${question.kind} ${question.show}`;
    if (this.#rejected.has(scope)) return "n";
    const picked = this.#callFor(question);
    const toolCall: Record<string, unknown> = picked
      ? {
        toolCallId: picked.call.call_id,
        title: maskOutput(picked.description.title),
        kind: picked.description.kind,
        status: "pending",
      }
      : { toolCallId: `approval-${crypto.randomUUID()}`, title: `${question.kind}` };
    let open = picked;
    if (open?.description.diff && open.file && open.file !== "unreadable") {
      const buffer = await this.opts.bufferText?.(open.file.path).catch(() => undefined);
      if (buffer !== undefined) open = { ...open, file: { path: open.file.path, before: buffer } };
    }
    toolCall.content = [
      // An edit as the file would change, whole: editors show it as a diff.
      ...editDiff(open),
      { type: "content", content: { type: "text", text: maskOutput(question.show) } },
    ];
    const answer = await this.opts.request(toolCall, question.always !== undefined);
    switch (answer) {
      case "allow_once":
        return "y";
      case "allow_always":
        return question.always !== undefined ? "a" : "y";
      case "reject_always":
        this.#rejected.add(scope);
        return "n";
      case "reject_once":
        return "n";
      default:
        return null;
    }
  }

  /** The announced call the question is about (the gate asks one at a time, in call order). */
  #callFor(question: ApprovalQuestion) {
    const open = this.opts.console.openCalls().filter((c) => !this.#asked.has(c.call.call_id));
    const fits = open.find(({ call, description }) => {
      if (description.command !== undefined) {
        return question.kind === "command" &&
          question.show.includes(firstLine(description.command).trim());
      }
      if (description.diff) {
        return question.kind === "edit" && question.show.includes(description.diff.path);
      }
      return (question.kind === "tool call" || question.kind === "fetch") &&
        question.show.startsWith(call.name);
    }) ?? open[0];
    if (fits) this.#asked.add(fits.call.call_id);
    return fits;
  }
}

/** The first line of `text`, found without splitting all of it. */
function firstLine(text: string): string {
  const end = text.indexOf("\n");
  return end < 0 ? text : text.slice(0, end);
}

/** The diff block of an edit about to be asked about, when the file was read and it applies. */
function editDiff(open: OpenCall | undefined): Record<string, unknown>[] {
  const preview = open?.description.diff?.after;
  const file = open?.file;
  if (!preview || !file || file === "unreadable") return [];
  let after: string | undefined;
  try {
    after = preview(file.before);
  } catch {
    return [];
  }
  if (after === undefined) return [];
  return [{
    type: "diff",
    path: file.path,
    oldText: file.before === null ? null : maskOutput(file.before),
    newText: maskOutput(after),
  }];
}
