/**
 * The configuration's types, in Trae Agent's shape (`model_providers`, `models`, `agents`,
 * `lakeview`, `mcp_servers`, `allow_mcp_servers`) plus Deft's own tool and sandbox settings.
 * They are read off the zod schema in `load.ts`, which checks the YAML, so the two cannot drift;
 * `config.example.yaml` documents every key.
 */
import type { DeftConfig } from "./load.ts";

export type { DeftConfig };

/** How to reach one provider account. */
export type ModelProviderConfig = DeftConfig["model_providers"][string];

/** One model and its sampling settings. */
export type ModelConfig = DeftConfig["models"][string];

/** The agent: which model, how many steps, which tools. */
export type AgentConfig = DeftConfig["agents"][string];

/** An MCP server Deft may start (stdio: `command`) or reach (streamable HTTP: `url`). */
export type McpServerConfig = DeftConfig["mcp_servers"][string];
