/**
 * `deft hooks import`: a Claude Code settings file's `hooks` as Deft's `hooks:` key. Events and
 * command hooks keep their shape; matchers are rewritten to Deft's tool names:
 *
 * - `Bash` → `bash`.
 * - `Edit`, `Write`, `MultiEdit`, `Read` → `str_replace_based_edit_tool`, the editor, whose
 *   `command` argument (`view`, `create`, `str_replace`, `insert`) says which of them a call is.
 *   A matcher selects tools, not commands, so a hook imported for `Write` alone also sees the
 *   editor's views: the hook must read `tool_input.command` itself when that matters. The editor's
 *   arguments reach hooks under Deft's names (`path`, `old_str`, `new_str`, `file_text`) and
 *   Claude Code's (`file_path`, `old_string`, `new_string`, `content`): hooks.ts `withClaudeNames`.
 * - `mcp__SERVER__TOOL` names, `*` and an empty matcher stay as they are.
 * - A hook that writes a log under `~`, notifies the desktop or posts to the network
 *   (`outsideReason`) gets
 *   `sandbox: none`, with a note saying what that trusts: inside the sandbox it could not. One that
 *   also runs a program from the project stays sandboxed, with a note on how to move it out.
 * - Other tools (`Glob`, `Grep`, `LS`, `WebFetch`, `WebSearch`, `NotebookEdit`,
 *   `TodoWrite`, …) have no Deft tool: they are dropped from the matcher and named; a group left
 *   matching nothing is dropped. So are events Deft does not fire (`Notification`)
 *   and hooks that are not `type: command`.
 */
import { HOOK_EVENTS, type HookEvent, type HooksConfig } from "../config/hooks_schema.ts";

const EDITOR = "str_replace_based_edit_tool";

/** Claude Code's tool names that have a Deft tool. */
const TOOL_MAP: Readonly<Record<string, string>> = {
  Bash: "bash",
  Edit: EDITOR,
  Write: EDITOR,
  MultiEdit: EDITOR,
  Read: EDITOR,
  Task: "Task",
};

/** The converted hooks, and what could not be converted (one line each). */
export interface ImportedHooks {
  hooks: HooksConfig;
  unmapped: string[];
  /** Notes on what maps only approximately (the editor's commands). */
  notes: string[];
}

/** Converts the `hooks` of a Claude Code settings object. */
export function importClaudeHooks(settings: unknown): ImportedHooks {
  const out: ImportedHooks = { hooks: {}, unmapped: [], notes: [] };
  const hooks = isObject(settings) ? settings.hooks : undefined;
  if (hooks === undefined) return out;
  if (!isObject(hooks)) {
    out.unmapped.push("hooks: not an object; none is imported");
    return out;
  }
  for (const [event, groups] of Object.entries(hooks)) {
    if (!HOOK_EVENTS.includes(event as HookEvent)) {
      out.unmapped.push(`event ${event}: Deft does not fire it; its hooks are dropped`);
      continue;
    }
    if (!Array.isArray(groups)) {
      out.unmapped.push(`event ${event}: not a list of matcher groups; dropped`);
      continue;
    }
    const converted: NonNullable<HooksConfig[HookEvent]> = [];
    for (const group of groups) {
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        out.unmapped.push(`event ${event}: a group without a hooks list; dropped`);
        continue;
      }
      const matcher = mapMatcher(event, group.matcher, out);
      if (matcher === null) continue;
      const commands = [];
      for (const hook of group.hooks) {
        if (!isObject(hook) || hook.type !== "command" || typeof hook.command !== "string") {
          const kind = isObject(hook) ? String(hook.type) : typeof hook;
          out.unmapped.push(`event ${event}: a hook of type ${kind} (only command hooks run)`);
          continue;
        }
        const outside = outsideReason(hook.command);
        if (outside && runsProjectCode(hook.command)) {
          out.notes.push(
            `event ${event}: hook ${JSON.stringify(hook.command)} ${outside}, which the sandbox ` +
              `does not allow, but it runs a program from the project, so it stays sandboxed (an ` +
              `outside hook may not run what the model can change): move the program out of the ` +
              `project (e.g. to ~/.config/deft/hooks/) and add \`sandbox: none\` to run it outside`,
          );
        } else if (outside) {
          out.notes.push(
            `event ${event}: hook ${JSON.stringify(hook.command)} ${outside}, so it is imported ` +
              `with \`sandbox: none\`: it runs outside the sandbox, as you, with your files and ` +
              `network (git with Deft's hardened settings); it trusts nothing from the project, ` +
              `so keep it from reading or running what is there`,
          );
        }
        commands.push({
          type: "command" as const,
          command: hook.command,
          ...(typeof hook.timeout === "number" && hook.timeout > 0
            ? { timeout: hook.timeout }
            : {}),
          ...(outside && !runsProjectCode(hook.command) ? { sandbox: "none" as const } : {}),
        });
      }
      if (commands.length === 0) continue;
      converted.push({ ...(matcher !== undefined ? { matcher } : {}), hooks: commands });
    }
    if (converted.length > 0) out.hooks[event as HookEvent] = converted;
  }
  return out;
}

/** The Deft matcher for a Claude Code one; undefined: every tool; null: nothing is left. */
function mapMatcher(
  event: string,
  matcher: unknown,
  out: ImportedHooks,
): string | undefined | null {
  if (matcher === undefined || matcher === "" || matcher === "*") return undefined;
  if (typeof matcher !== "string") {
    out.unmapped.push(`event ${event}: a matcher that is not a string; its group is dropped`);
    return null;
  }
  // The session events match their source, reason or trigger (`manual|auto`), not tool names.
  if (!TOOL_EVENTS.has(event)) return matcher;
  if (!/^[A-Za-z0-9_|]+$/.test(matcher)) {
    // A real regular expression: names Deft shares (mcp__…) still match; say it was kept.
    out.notes.push(
      `event ${event}: matcher ${JSON.stringify(matcher)} kept as written (a regular ` +
        `expression over Deft's tool names now; Claude Code's tool names in it match nothing)`,
    );
    return matcher;
  }
  const names: string[] = [];
  for (const name of matcher.split("|").filter((n) => n !== "")) {
    const mapped = name.startsWith("mcp__") ? name : TOOL_MAP[name];
    if (!mapped) {
      out.unmapped.push(`event ${event}: tool ${name} has no Deft tool; dropped from its matcher`);
      continue;
    }
    if (mapped === EDITOR) {
      out.notes.push(
        `event ${event}: ${name} → ${EDITOR} (the editor: a matcher cannot select its command; ` +
          `the hook sees every editor call and can read tool_input.command)`,
      );
    }
    if (!names.includes(mapped)) names.push(mapped);
  }
  if (names.length === 0) {
    out.unmapped.push(
      `event ${event}: matcher ${
        JSON.stringify(matcher)
      } selects no Deft tool; its group is dropped`,
    );
    return null;
  }
  return names.join("|");
}

const TOOL_EVENTS: ReadonlySet<string> = new Set(["PreToolUse", "PostToolUse"]);

/** Programs that notify the desktop (or speak, or ring): they need the user's session. */
const NOTIFIERS =
  /(^|[\s;&|(/])(notify-send|osascript|terminal-notifier|kdialog|zenity|gdbus|dunstify|say|afplay|paplay|aplay|powershell(\.exe)?|wsl-notify-send|ntfy)(\s|$|;|&|\|)/;
/** Writing under the home folder: a redirection or `tee` to `~/…`, `$HOME/…`, `${HOME}/…`. */
const HOME_WRITE = /(>>?|\btee(\s+-[a-z]+)*)\s*["']?(~|\$HOME|\$\{HOME\})\//;

/** Programs that post somewhere (a chat webhook, a notification service). */
const NETWORK = /(^|[\s;&|(/])(curl|wget|http|xh)(\s|$)/;

/**
 * Why a Claude Code hook must run outside the sandbox to keep working (it writes a log under `~`,
 * notifies the desktop, or posts to the network: the sandbox shows the home folder read-only, hides
 * the session's sockets and has no network unless the session allows it), or undefined when it
 * can run inside.
 */
export function outsideReason(command: string): string | undefined {
  if (HOME_WRITE.test(command)) return "writes under your home folder";
  if (NOTIFIERS.test(command)) return "notifies the desktop";
  if (NETWORK.test(command)) return "reaches the network (the sandbox has none unless allowed)";
  return undefined;
}

/** The hook runs a program from the project folder (`./…`, `$CLAUDE_PROJECT_DIR/…`). */
function runsProjectCode(command: string): boolean {
  return /(^|[\s;&|("'])\.{1,2}\/|\$\{?(CLAUDE|DEFT)_PROJECT_DIR\b/.test(command);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
