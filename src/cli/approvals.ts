/**
 * `deft approvals [remove N]`: the approval rules in force in the current folder, numbered,
 * strongest first, each with where it was set; `remove N` takes one away from the file it lives
 * in (this project's saved rules, or the user's config). A repository's rules and a policy
 * file's are edited in their files.
 */
import { openApprovalRules } from "../agent/approval_rules.ts";
import { APPROVAL_ACTIONS, type ApprovalRule } from "../config/approval_rules.ts";
import { removeUserRule, saveProjectRule } from "../config/approval_rules.ts";
import { loadConfig } from "../config/load.ts";
import { terminalLine } from "../policy/terminal_text.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";

/** Options of `deft approvals`. */
export interface ApprovalsOptions {
  configFile?: string;
  approvalRules?: string;
}

/** The rules in force for the real folder `project`, strongest first, as listed. */
export async function rulesInForce(
  project: string,
  opts: ApprovalsOptions,
  warn: (text: string) => void,
): Promise<ApprovalRule[]> {
  const loaded = await loadConfig(opts.configFile);
  const rules = await openApprovalRules(loaded, project, {
    rulesFile: opts.approvalRules,
    configFile: opts.configFile,
    warn,
  });
  return APPROVAL_ACTIONS.flatMap((action) => rules.list().filter((r) => r.action === action));
}

/** One rule as a line: `allow  $ git status  (this project: FILE)`. */
export function ruleLine(rule: ApprovalRule): string {
  const where = {
    user: "your config",
    project: "this project",
    repository: "this repository's config",
    file: "--approval-rules",
    session: "this session",
  }[rule.origin];
  return `${rule.action.padEnd(5)}  ${shown(rule.text)}  (${where}: ${shown(rule.source)})`;
}

/** Lists the rules, or removes rule `n`; returns the exit code. */
export async function approvalsCommand(
  action: string | undefined,
  n: string | undefined,
  opts: ApprovalsOptions,
): Promise<number> {
  const project = await Deno.realPath(".");
  const rules = await rulesInForce(project, opts, (w) => writeStderr(`warning: ${shown(w)}`));
  if (action === undefined || action === "list") {
    if (rules.length === 0) {
      writeStderr(
        "No approval rules here. Add them under approvals: in your config (allow, ask, deny), " +
          'or answer "always" → "this project" at an approval question.',
      );
      return 0;
    }
    await writeStdout(rules.map((r, i) => `${i + 1}. ${ruleLine(r)}\n`).join(""));
    return 0;
  }
  if (action !== "remove") {
    throw new UsageError(`deft approvals: unknown action '${shown(action)}'; use remove N.`);
  }
  const index = Number(n);
  if (!Number.isInteger(index) || index < 1 || index > rules.length) {
    throw new UsageError(
      `deft approvals remove: give the number of a rule as listed (1 to ${rules.length}), ` +
        `not '${shown(n ?? "")}'.`,
    );
  }
  const rule = rules[index - 1];
  if (rule.origin === "project") {
    await saveProjectRule(project, rule.action, rule.text, true);
  } else if (rule.origin === "user") {
    await removeUserRule(rule.source, rule.action, rule.text);
  } else {
    throw new UsageError(
      `Rule ${index} (${shown(rule.text)}) is set in ${shown(rule.source)}, which Deft does not ` +
        `edit; remove it from that file.`,
    );
  }
  writeStderr(`removed: ${ruleLine(rule)}`);
  return 0;
}

function shown(text: string): string {
  return terminalLine(text, { style: "escape", tabs: false });
}
