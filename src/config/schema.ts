/**
 * The configuration's types, in Trae Agent's shape (`model_providers`, `models`, `agents`,
 * `lakeview`, `mcp_servers`, `allow_mcp_servers`) plus Deft's own tool and sandbox settings.
 * `load.ts` reads YAML into these types; `config.example.yaml` documents every key.
 */
import type { ProviderName } from "./providers.ts";
import type { ShellEnvironmentPolicy } from "../policy/shell_env.ts";

/** How to reach one provider account. */
export interface ModelProviderConfig {
  provider: ProviderName;
  api_key?: string;
  base_url?: string;
  api_version?: string;
}

/** One model and its sampling settings. */
export interface ModelConfig {
  model_provider: string;
  model: string;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  parallel_tool_calls: boolean;
  max_retries: number;
  /** Tokens the model accepts; context management keeps the conversation under it. */
  context_window?: number;
  supports_tool_calling?: boolean;
  candidate_count?: number;
  stop_sequences?: string[];
}

/** The agent: which model, how many steps, which tools. */
export interface AgentConfig {
  model: string;
  max_steps: number;
  enable_lakeview: boolean;
  tools: string[];
}

/** The optional step-summary model. */
export interface LakeviewConfig {
  model: string;
}

/** An MCP server Deft may start (stdio: `command`) or reach (streamable HTTP: `url`). */
export interface McpServerConfig {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** Seconds a call may take before it fails and the server is restarted. */
  timeout?: number;
  description?: string;
}

/** Tool settings (all optional; defaults live with the tools). */
export interface ToolSettingsConfig {
  bash_timeout?: number;
  output_limit?: number;
  max_file_bytes?: number;
  ckg_dir?: string;
  /** Seconds a tool call may run, per tool name; `default` for the rest. */
  deadlines?: Record<string, number>;
}

/** The whole resolved configuration. */
export interface DeftConfig {
  model_providers: Record<string, ModelProviderConfig>;
  models: Record<string, ModelConfig>;
  agents: Record<string, AgentConfig>;
  lakeview?: LakeviewConfig;
  mcp_servers: Record<string, McpServerConfig>;
  allow_mcp_servers: string[];
  sandbox?: "none" | "workspace-write" | "read-only";
  allow_network: boolean;
  /** When to ask before a tool call; unset: `never` for run, `commands` for interactive. */
  approval?: "never" | "commands" | "all";
  tool_settings: ToolSettingsConfig;
  /** Folders whose own config file may set every key (`deft trust`); only read from user config. */
  trusted_folders?: string[];
  /** Which variables the model's shell inherits (policy/shell_env.ts). */
  shell_environment?: ShellEnvironmentPolicy;
  /** USD per million tokens by model name; overrides src/llm/prices.ts's table. */
  prices: Record<
    string,
    { input: number; output: number; cache_read?: number; cache_write?: number }
  >;
}
