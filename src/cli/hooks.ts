/**
 * `deft hooks`: the hooks in force here, where each runs (in the sandbox, or outside it) and the
 * file each came from; `deft hooks import FILE`:
 * a Claude Code settings file's hooks and permissions as Deft's `hooks:` and `approvals:` YAML. Also the hooks of the tool-serving
 * commands (`deft serve`, `deft mcp`) and the approval rules behind them: they have no session.
 */
import { stringify } from "yaml";
import { loadConfig } from "../config/load.ts";
import { ApprovalGate } from "../gate/approval.ts";
import { openApprovalRules } from "../agent/approval_rules.ts";
import { gatedExecutor } from "../gate/pipeline.ts";
import type { Tool } from "../tools/base.ts";
import type { ToolExecutor } from "../tools/executor.ts";
import { hookEntries, Hooks } from "../hooks/hooks.ts";
import { importClaudeHooks } from "../hooks/import.ts";
import { importClaudePermissions } from "../hooks/import_permissions.ts";
import { readEnv } from "../env.ts";
import { OwnFileError, readOwnText } from "../policy/own_file.ts";
import { resolveToolSettings } from "../config/tool_settings.ts";
import { hookPolicy, hookPolicyUnderList } from "../policy/hooks.ts";
import type { PolicySettings } from "../policy/process.ts";
import { hooksSource } from "../hooks/source.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { UsageError } from "../errors.ts";
import { writeStderr, writeStdout } from "./io.ts";

/** Prints the hooks in force (the config as `deft run` would load it here) and where each runs. */
export async function hooksList(opts: { configFile?: string } = {}): Promise<number> {
  const loaded = await loadConfig(opts.configFile);
  const cwd = Deno.cwd();
  if (hookEntries(loaded.config.hooks).length === 0) {
    await writeStdout(
      "no hooks configured" + (loaded.path ? ` (config: ${loaded.path})` : "") + "\n",
    );
    return 0;
  }
  const settings = resolveToolSettings(loaded.config, {});
  const hooks = new Hooks(loaded.config.hooks, hooksSource(loaded), {
    cwd,
    report: () => {},
    policy: hookPolicy(cwd, settings),
  });
  const inside = hooks.policy.sandbox === "none"
    ? "unsandboxed (no sandbox here: sandbox none, as the model's shell)"
    : `sandboxed (${hooks.policy.sandbox}, ${
      hooks.policy.network ? "network" : settings.network ? "the network list" : "no network"
    })`;
  const lines = hooks.entries.map((e) =>
    [
      e.event,
      e.event === "PreToolUse" || e.event === "PostToolUse" ? (e.matcher || "*") : "-",
      e.hook.command,
      e.hook.sandbox === "none" ? "outside the sandbox (sandbox: none)" : inside,
      `timeout ${e.hook.timeout ?? 60}s`,
      `from ${e.source ?? "(no file)"}`,
    ].map((s) => terminalText(s)).join("\t")
  );
  await writeStdout(lines.join("\n") + "\n");
  return 0;
}

/**
 * Prints FILE's hooks and permission rules as Deft's config YAML (`hooks:`, `approvals:`); what
 * could not be converted goes to stderr.
 */
/** Largest settings file read: far above any real one. */
const SETTINGS_LIMIT = 1024 * 1024;

export async function hooksImport(file: string): Promise<number> {
  let text: string;
  try {
    text = await readOwnText(file, {
      limit: SETTINGS_LIMIT,
      what: "a settings file",
      hint: "Name the plain JSON file itself (Claude Code's are a few kilobytes), not a link to " +
        "a device or a pipe.",
    });
  } catch (e) {
    if (e instanceof OwnFileError) throw new UsageError(e.message);
    if (
      e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied ||
      e instanceof Deno.errors.NotCapable
    ) {
      throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
    }
    throw e;
  }
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch (e) {
    throw new UsageError(
      `cannot read ${file} as a Claude Code settings file (JSON): ${(e as Error).message}`,
    );
  }
  const hooks = importClaudeHooks(settings);
  const rules = importClaudePermissions(settings, readEnv("HOME"));
  const has = (o: object) => Object.keys(o).length > 0;
  const yaml = {
    ...(has(hooks.hooks) ? { hooks: hooks.hooks } : {}),
    ...(has(rules.approvals) ? { approvals: rules.approvals } : {}),
  };
  if (!has(yaml) && hooks.unmapped.length + rules.unmapped.length === 0) {
    throw new UsageError(`${file} has neither \`hooks\` nor \`permissions\` to import`);
  }
  await writeStdout(has(yaml) ? stringify(yaml, { lineWidth: 0 }) : "{}\n");
  for (const note of [...hooks.notes, ...rules.notes]) writeStderr(`note: ${terminalText(note)}`);
  for (const line of [...hooks.unmapped, ...rules.unmapped]) {
    writeStderr(`not imported: ${terminalText(line)}`);
  }
  return 0;
}

/**
 * The tools of `deft serve` and `deft mcp` behind the gate pipeline. Those commands ask nobody:
 * the config's PreToolUse/PostToolUse hooks and its approval rules apply in mode `never`. A deny
 * rule or hook refuses; a call an ask rule or a hook's ask is about is refused too (nobody can
 * be asked), unless the user passed `--approve-asks`. The hooks run in the tools' sandbox
 * (`settings`), over the workspace. `hooks`: for SessionEnd at the end.
 */
export async function toolServerExecutor(
  tools: readonly Tool[],
  workspace: string,
  settings: PolicySettings,
  command: string,
  approveAsks = false,
): Promise<{ executor: ToolExecutor; hooks?: Hooks }> {
  const loaded = await loadConfig();
  const warn = (text: string) => writeStderr(`deft: warning: ${terminalText(text)}`);
  const entries = hookEntries(loaded.config.hooks);
  const hooks = entries.length === 0 ? undefined : new Hooks(
    loaded.config.hooks,
    hooksSource(loaded),
    {
      cwd: workspace,
      report: warn,
      // With a network list, a sandboxed hook reaches it through the proxy, as the shell does.
      policy: entries.some((e) => e.hook.sandbox !== "none")
        ? await hookPolicyUnderList(workspace, settings)
        : hookPolicy(workspace, settings),
    },
  );
  const rules = await openApprovalRules(loaded, workspace, { warn });
  const approval = new ApprovalGate(
    "never",
    () => Promise.resolve(null),
    () => {},
    workspace,
    false,
    rules,
    approveAsks ? undefined : command,
  );
  return { executor: gatedExecutor(tools, { hooks, approval }), hooks };
}
