/**
 * The approval question: what the user is shown about a call and how each answer is taken —
 * yes, no with a reason for the model, "always" (for this session or, saved as an allow rule,
 * this project) and "session" (ask nothing more).
 */
import { maskOutput } from "../policy/secrets.ts";
import type { ApprovalDecision } from "../tools/approval_decision.ts";
import type { GateDecision } from "../tools/executor.ts";
import type { ApprovalMode } from "./modes.ts";
import { visible } from "./preview.ts";
import type { RuleBook, RuleMatch } from "./rules.ts";

/**
 * Asks the user one question; resolves to the answer line, or null when nobody answers. `hold`,
 * when given, takes the screen for the whole exchange (the question, the answers, the decision
 * shown): it stops what else draws there and returns the function that gives the screen back.
 * `tell`, when given, shows the decision taken from the answer (`→ yes`).
 */
export type AskUser = ((question: string) => Promise<string | null>) & {
  hold?: () => () => void;
  tell?: (text: string) => void;
};

/** What one call needs before it runs. */
export interface Request {
  /** What the user sees: the command, or the edit as a diff. */
  show: string;
  /** The key "always" remembers; undefined when "always" is not offered. */
  always?: string;
  alwaysLabel?: string;
  kind: "command" | "edit" | "fetch" | "tool call";
  /** An ask rule asks about it: no earlier "always" covers it. */
  rule?: RuleMatch["rule"];
  /** Why it is asked although no rule may match: what Deft could not judge. */
  unjudged?: string;
}

/** What the question needs of the gate that puts it. */
export interface Asker {
  readonly mode: ApprovalMode;
  readonly ask: AskUser;
  readonly show: (text: string) => void;
  readonly rules?: RuleBook;
  /** Remembers an "always" answer for `key`, for the rest of the session. */
  remember(key: string): void;
  /** The user answered "session": nothing more is asked. */
  stopAsking(): void;
}

/** Puts the question about `request` and takes the answer (a no is the call's refusal). */
export async function question(gate: Asker, request: Request): Promise<GateDecision> {
  const mode = gate.mode;
  const user = (
    answer: ApprovalDecision["answer"] & string,
    refused?: string,
    extra: Partial<ApprovalDecision> = {},
  ): GateDecision => ({
    verdict: refused === undefined ? null : refusal(request, refused),
    decision: {
      decision: refused === undefined ? "allow" : "deny",
      decided_by: "user",
      mode,
      asked: true,
      answer,
      ...extra,
      ...(refused ? { reason: refused } : {}),
    },
  });
  const choices = [
    "[y]es",
    `[n]o, with a reason for the model ("n use the test script")`,
    ...(request.always
      ? [
        `[a]lways for ${visible(request.alwaysLabel ?? "")}${
          gate.rules?.project ? " (this session or this project)" : ""
        }`,
      ]
      : []),
    "[s]ession: ask nothing more in this session",
  ].join(" · ");
  const tell = (text: string) => gate.ask.tell?.(text);
  const asking = request.unjudged
    ? `\n(${visible(request.unjudged)})`
    : request.rule
    ? `\n(asked by the rule \`ask ${visible(request.rule.text)}\` from ${
      visible(request.rule.source)
    })`
    : "";
  // The file's lines around an edit can hold a key: masked as the trajectory masks it.
  gate.show(
    `\nApprove this ${request.kind}?${asking}\n${maskOutput(visible(request.show))}\n${choices}`,
  );
  for (;;) {
    const line = await gate.ask("approve> ");
    if (line === null) {
      tell("→ no answer: not run");
      return user("none", "no answer (the prompt was closed or interrupted)");
    }
    const answer = line.trim();
    const word = /^([a-z]+)\b[\s:,.-]*(.*)$/is.exec(answer);
    const head = word?.[1].toLowerCase() ?? "";
    if (head === "y" || head === "yes") {
      tell("→ yes");
      return user("yes");
    }
    if ((head === "a" || head === "always") && request.always) {
      // No answer to "where" (the prompt closed, or an asker that only answers approval
      // questions, such as an ACP client's "always allow"): the yes stands, for this session.
      const where = await alwaysWhere(gate, request.always, word?.[2] ?? "") ?? "session";
      gate.remember(request.always);
      if (where === "project" && gate.rules) {
        try {
          const file = await gate.rules.addProject("allow", request.always);
          tell(
            `→ yes, and always in this project: saved the rule \`allow ${
              visible(request.always)
            }\` (${visible(file)}; \`deft approvals\` lists and removes it)`,
          );
          return user("always", undefined, {
            always: request.always,
            rule: { text: request.always, source: file },
          });
        } catch (e) {
          gate.show(
            `Could not save the rule for this project (${
              (e as Error).message
            }); it holds for this session only.`,
          );
        }
      }
      tell(`→ yes, and to ${visible(request.alwaysLabel ?? "")} for the rest of the session`);
      return user("always", undefined, { always: request.always });
    }
    if (head === "s" || head === "session") {
      gate.stopAsking();
      tell("→ yes, and to every call for the rest of the session (approval: never)");
      return user("session");
    }
    if (head === "n" || head === "no") {
      const reason = word?.[2].trim() ?? "";
      tell(`→ no${reason ? `; the model is told: ${visible(reason)}` : ""}`);
      return user("no", reason);
    }
    gate.show(
      `Please answer y, n (with an optional reason)${request.always ? ", a" : ""} or s.`,
    );
  }
}

/**
 * Where an "always" answer holds: this session, or (when the gate knows its project) this
 * project, saved as an allow rule. `rest` is what followed the `a` (`a p`); else asked. Null
 * when nobody answers.
 */
async function alwaysWhere(
  gate: Asker,
  key: string,
  rest: string,
): Promise<"session" | "project" | null> {
  if (!gate.rules?.project) return "session";
  const pick = (text: string) => {
    const head = text.trim().toLowerCase();
    if (/^(p|project)\b/.test(head)) return "project" as const;
    if (head === "" || /^(s|session)\b/.test(head)) return "session" as const;
    return undefined;
  };
  const inline = rest.trim() === "" ? undefined : pick(rest);
  if (inline) return inline;
  gate.show(
    `Always allow \`${visible(key)}\`: [s] this session only (Enter) · [p] this project ` +
      `(saved as the rule \`allow ${visible(key)}\`, kept outside the repository)`,
  );
  for (;;) {
    const line = await gate.ask("always> ");
    if (line === null) return null;
    const where = pick(line);
    if (where) return where;
    gate.show("Please answer s (this session) or p (this project).");
  }
}

function refusal(request: Request, reason: string): string {
  const why = reason.trim();
  return `The user denied this ${request.kind}${why ? `: ${sentence(why)}` : "."} It did not ` +
    `run. Do not repeat it unchanged; take the reason into account or ask the user how to proceed.`;
}

/**
 * `text` ended as a sentence: a full stop added unless it already ends with one (or `!`, `?`, `…`,
 * before any closing quotes or brackets), so the words after it start a sentence of their own.
 */
export function sentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.!?…]["'”’)\]`]*$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
