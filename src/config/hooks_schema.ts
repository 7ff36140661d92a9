/**
 * The `hooks:` key, in Claude Code's shape: an event maps to a list of groups, each a `matcher`
 * (a regular expression over tool names for the tool events; over `source`, `reason` or `trigger`
 * for SessionStart, SessionEnd and PreCompact) and the command hooks it runs.
 * Only the user's config (or a trusted folder's) sets it: config/trust.ts drops it from an
 * untrusted repository's file like every key not known to be harmless, so no repository can add a
 * hook, least of all one that says `sandbox: none`.
 */
import { z } from "zod";

/** The events Deft fires hooks at. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "SubagentStart",
  "SubagentStop",
] as const;

/** One hook event's name. */
export type HookEvent = typeof HOOK_EVENTS[number];

const commandHookSchema = z.strictObject({
  type: z.literal("command"),
  command: z.string().min(1),
  /** Seconds before the hook is killed with its process group (default 60, as Claude Code). */
  timeout: z.number().positive().max(3600).optional(),
  /** Names of Deft's own variables the hook may also see (provider keys only when named here). */
  env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
  /**
   * `none`: the hook runs outside the session's sandbox, as the user (a desktop notification, a
   * log in `~`). Left out, it runs inside, with the model's shell's view of the machine.
   */
  sandbox: z.literal("none").optional(),
});

const matcherGroupSchema = z.strictObject({
  matcher: z.string().refine((m) => {
    try {
      new RegExp(m);
      return true;
    } catch {
      return false;
    }
  }, "not a valid regular expression").optional(),
  hooks: z.array(commandHookSchema).min(1),
});

export const hooksSchema = z.partialRecord(z.enum(HOOK_EVENTS), z.array(matcherGroupSchema));

/** One configured command hook. */
export type CommandHookConfig = z.output<typeof commandHookSchema>;

/** The `hooks:` key as loaded. */
export type HooksConfig = z.output<typeof hooksSchema>;
