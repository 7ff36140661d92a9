/**
 * What `deft interactive` checks before it draws its prompt, loading none of the agent, the
 * tools, the model client or the MCP client: the workspace, the configuration (read and checked,
 * a repository's file trusted or not, asked on the terminal), and what the session would refuse
 * from it (the approval mode, the provider, its key and base URL, the model, an unknown tool name in
 * `agents.*.tools`, a mistake in an approval rules file, a budget it cannot keep). So every configuration mistake a user met before the prompt still stops the
 * start there; the session is assembled behind the drawn prompt (./chat.ts). Without a config
 * file the schema (zod, the YAML parser) is not loaded at all.
 */
import { workspaceOf } from "../workspace_arg.ts";
import { configFileGiven, defaultConfigWithoutSchema } from "../../config/defaults.ts";
import type { LoadedConfig } from "../../config/load.ts";
import { ConfigError } from "../../config/errors.ts";
import { resolveRunConfig, type RunConfig } from "../../config/resolve.ts";
import { isApprovalMode } from "../../gate/modes.ts";
import { unknownToolName } from "../../tools/names.ts";
import { checkProvider } from "../../llm/provider_check.ts";
import { deftConfigDir, deftStateDir } from "../../policy/dirs.ts";
import { terminalText } from "../../policy/terminal_text.ts";
import { UsageError } from "../io.ts";
import type { InteractiveOptions } from "./options.ts";

/** How the preflight asks and tells the user (the composer's question, lines above the prompt). */
export interface PreflightIO {
  terminal: boolean;
  ask: (question: string) => Promise<string | null>;
  write: (text: string) => void;
}

/** What the preflight found: the session's configuration and workspace, and what the prompt says. */
export interface Preflight {
  loaded: LoadedConfig;
  workspace: string;
  provider: string;
  model: string;
  approval: string;
}

/**
 * Whether the session can be assembled behind its prompt: a session on the host that goes on
 * from nothing. A container (its start says what it does) and a resumed session (the picker, the
 * resumed session's line) are opened before the prompt, as they always were.
 */
export function assemblesBehindPrompt(opts: InteractiveOptions): boolean {
  const container = opts.dockerImage !== undefined || opts.dockerContainerId !== undefined ||
    opts.dockerfilePath !== undefined || opts.dockerImageFile !== undefined;
  return !container && !opts.continue && opts.resume === undefined;
}

/** Checks the start as openSession would, without assembling anything; throws what it would. */
export async function preflight(opts: InteractiveOptions, io: PreflightIO): Promise<Preflight> {
  const workspace = await workspaceOf(opts.workingDir);
  const loaded = await loadConfiguration(opts, io);
  for (const warning of loaded.warnings) io.write(`warning: ${terminalText(warning)}`);
  // As openSession's assembly checks them (src/agent/session.ts), in its order.
  const approval = opts.approval ?? loaded.config.approval ?? "commands";
  if (!isApprovalMode(approval)) {
    throw new UsageError(`--approval must be never, commands or all, not '${approval}'.`);
  }
  if (approval !== "never" && !io.terminal) {
    throw new UsageError(
      `approval mode '${approval}' asks before tool calls, but standard input is not a ` +
        `terminal, so nobody could answer. Run with --approval never (or set approval: never) ` +
        `for unattended use, or start Deft from a terminal.`,
    );
  }
  const config = resolveRunConfig(loaded, { ...opts }, undefined, true);
  // The clients are built from these: what a provider lacks is said now, not behind the prompt.
  checkProvider(config.model);
  if (config.lakeview) checkProvider(config.lakeview);
  const unknown = unknownToolName(config.agent.tools);
  if (unknown) throw new ConfigError(`agents.*.tools: ${unknown}`);
  await checkApprovalRules(opts, loaded, workspace);
  await checkBudget(opts, config, workspace);
  return {
    loaded,
    workspace,
    provider: config.model.provider.provider,
    model: config.model.settings.model,
    approval,
  };
}

/**
 * The approval rules, read as the session will read them, so a mistake in one of their files
 * stops the start here: loaded only when there is a file to read them from (the config file,
 * `--approval-rules`, the user's saved project rules). Their warnings are the session's to tell.
 */
async function checkApprovalRules(
  opts: InteractiveOptions,
  loaded: LoadedConfig,
  workspace: string,
): Promise<void> {
  // config/approval_rules.ts's `projectRulesPath()`: beside the user's config file.
  const dir = deftConfigDir();
  const saved = dir !== undefined &&
    await Deno.lstat(`${dir}/project_approvals.yaml`).then(() => true, () => false);
  if (loaded.path === undefined && opts.approvalRules === undefined && !saved) return;
  const { openApprovalRules } = await import("../../agent/approval_rules.ts");
  await openApprovalRules(loaded, workspace, {
    rulesFile: opts.approvalRules,
    configFile: opts.configFile,
    warn: () => {},
  });
}

/**
 * The budget, opened as the session will open it (a cap that is not a positive number, a cost
 * cap on a model without a price, a ledger that cannot be read), when a cap or a ledger is asked.
 */
async function checkBudget(
  opts: InteractiveOptions,
  config: RunConfig,
  workspace: string,
): Promise<void> {
  const asked = opts.maxCostUsd ?? opts.maxTokens ?? opts.maxWallTime ?? opts.budgetLedger;
  if (asked === undefined && config.budget === undefined) return;
  const { openBudget } = await import("../../agent/budget.ts");
  await openBudget({ flags: opts, config, by: workspace });
}

/** The configuration: the schema and the trust question loaded only when there is a file. */
async function loadConfiguration(opts: InteractiveOptions, io: PreflightIO) {
  if (!await configFileGiven(opts.configFile, opts.configFolder)) {
    return { config: defaultConfigWithoutSchema(), warnings: [] };
  }
  const [{ loadConfig }, { askToTrust }] = await Promise.all([
    import("../../config/load.ts"),
    import("../../config/trust.ts"),
  ]);
  return await loadConfig(opts.configFile, {
    folder: opts.configFolder,
    onUntrusted: askToTrust({
      terminal: io.terminal,
      ask: io.ask,
      write: io.write,
      declinedFile: `${deftStateDir()}/declined_trust`,
    }),
  });
}
