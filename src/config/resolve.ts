/**
 * Layers the configuration for one run: CLI flags > environment (`<PROVIDER>_API_KEY`,
 * `<PROVIDER>_BASE_URL`) > file > defaults. The result names exactly one provider account, one
 * model and the agent settings, so nothing downstream needs to know where a value came from.
 */
import type { ToolSettings } from "../tools/base.ts";
import { ConfigError } from "./errors.ts";
import type { LoadedConfig } from "./load.ts";
import { isProvider, type ProviderName, PROVIDERS } from "./providers.ts";
import type {
  AgentConfig,
  DeftConfig,
  McpServerConfig,
  ModelConfig,
  ModelProviderConfig,
} from "./schema.ts";
import { DEFAULT_TOOL_NAMES } from "../tools/names.ts";
import { resolveToolSettings } from "./tool_settings.ts";
import { readEnv } from "../env.ts";
import type { SandboxMode } from "../policy/sandbox.ts";

/** What the command line can override. */
export interface ConfigOverrides {
  provider?: string;
  model?: string;
  modelBaseUrl?: string;
  apiKey?: string;
  maxSteps?: number;
  sandbox?: SandboxMode;
  /** `--parallel-subagents`: over the config's `subagents.parallel`. */
  parallelSubagents?: number;
}

/** A resolved provider account with its key and base URL in place. */
export interface ResolvedProvider extends ModelProviderConfig {
  /** The name of the environment variable the key would come from, for messages. */
  keyVariable: string;
}

/** A model ready to call. */
export interface ResolvedModel {
  name: string;
  provider: ResolvedProvider;
  settings: ModelConfig;
}

/** Everything one run needs. */
export interface RunConfig {
  model: ResolvedModel;
  lakeview?: ResolvedModel;
  agent: AgentConfig;
  mcpServers: Record<string, McpServerConfig>;
  allowMcpServers: string[];
  toolSettings: ToolSettings;
  configPath?: string;
  /** The config file's `approval`, if set. */
  approval?: DeftConfig["approval"];
  /** Model prices from the config file (USD per million tokens). */
  prices: DeftConfig["prices"];
  /** The config's budget caps (a repository's file can only have lowered them). */
  budget?: DeftConfig["budget"];
  /** Take a checkpoint after each turn (the config's `checkpoints`; default true). */
  checkpoints?: boolean;
  /** The config's `subagents` (src/agent/subagent.ts holds the defaults). */
  subagents?: DeftConfig["subagents"];
}

/** The agent section Deft reads: `deft_agent`, else Trae Agent's `trae_agent`. */
export const AGENT_KEYS = ["deft_agent", "trae_agent"];

const DEFAULT_MODELS: Partial<Record<ProviderName, string>> = {
  anthropic: "claude-sonnet-4-6",
  openai: "gpt-4.1",
  google: "gemini-2.5-pro",
};

/** Providers that work without an API key (local servers). */
const KEYLESS: readonly ProviderName[] = ["ollama", "openai_compatible"];

/** Resolves the run configuration; `requireKey` is false for `deft config`. */
export function resolveRunConfig(
  loaded: LoadedConfig,
  overrides: ConfigOverrides,
  env: (name: string) => string | undefined = readEnv,
  requireKey = true,
): RunConfig {
  const { config } = loaded;
  const agentKey = AGENT_KEYS.find((k) => config.agents[k]);
  const agent: AgentConfig = agentKey ? { ...config.agents[agentKey] } : {
    model: Object.keys(config.models)[0] ?? "default",
    max_steps: 200,
    enable_lakeview: false,
    tools: [...DEFAULT_TOOL_NAMES],
  };
  if (overrides.maxSteps !== undefined) {
    if (!Number.isInteger(overrides.maxSteps) || overrides.maxSteps < 1) {
      throw new ConfigError(`--max-steps must be a positive integer, got ${overrides.maxSteps}.`);
    }
    agent.max_steps = overrides.maxSteps;
  }
  const model = resolveModel(config, agent.model, overrides, env, requireKey);
  if (!agentKey) agent.model = model.name;
  const lakeview = agent.enable_lakeview && config.lakeview
    ? resolveModel(config, config.lakeview.model, {}, env, requireKey)
    : undefined;
  return {
    model,
    lakeview,
    agent,
    mcpServers: config.mcp_servers,
    allowMcpServers: config.allow_mcp_servers,
    toolSettings: resolveToolSettings(config, overrides, env),
    configPath: loaded.path,
    approval: config.approval,
    prices: config.prices ?? {},
    budget: config.budget,
    checkpoints: config.checkpoints,
    subagents: overrides.parallelSubagents === undefined
      ? config.subagents
      : { ...config.subagents, parallel: overrides.parallelSubagents },
  };
}

function resolveModel(
  config: DeftConfig,
  modelName: string,
  overrides: ConfigOverrides,
  env: (name: string) => string | undefined,
  requireKey: boolean,
): ResolvedModel {
  const configured = config.models[modelName];
  let providerKey = overrides.provider ?? configured?.model_provider;
  if (!providerKey) {
    providerKey = Object.keys(config.model_providers)[0] ?? "anthropic";
  }
  const fileProvider = config.model_providers[providerKey];
  if (!fileProvider && !isProvider(providerKey)) {
    throw new ConfigError(
      `Unknown provider '${providerKey}'. Use one of ${PROVIDERS.join(", ")}, ` +
        `or a name defined under model_providers.`,
    );
  }
  const kind = fileProvider?.provider ?? providerKey as ProviderName;
  const prefix = kind.toUpperCase();
  const provider: ResolvedProvider = {
    ...fileProvider,
    provider: kind,
    keyVariable: `${prefix}_API_KEY`,
  };
  const apiKey = overrides.apiKey ?? env(`${prefix}_API_KEY`) ?? fileProvider?.api_key;
  const baseUrl = overrides.modelBaseUrl ?? env(`${prefix}_BASE_URL`) ?? fileProvider?.base_url;
  if (apiKey) provider.api_key = apiKey;
  else delete provider.api_key;
  if (baseUrl) provider.base_url = baseUrl;
  if (requireKey && !provider.api_key && !KEYLESS.includes(kind)) {
    throw new ConfigError(
      `No API key for provider '${kind}': set ${prefix}_API_KEY, pass -k/--api-key, or set ` +
        `model_providers.${providerKey}.api_key in the config file.`,
    );
  }
  const modelId = overrides.model ?? configured?.model ?? DEFAULT_MODELS[kind];
  if (!modelId) {
    throw new ConfigError(
      `No model given for provider '${kind}': pass -m/--model or define one under models.`,
    );
  }
  const settings: ModelConfig = configured
    ? { ...configured, model_provider: providerKey, model: modelId }
    : { model_provider: providerKey, model: modelId, parallel_tool_calls: false, max_retries: 10 };
  return { name: configured ? modelName : modelId, provider, settings };
}
