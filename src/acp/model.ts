/**
 * The model of an ACP session as a session config option (`configOptions`, category `model`;
 * `session/set_config_option`, and the older `session/set_model` that some clients still send):
 * the choices are the model the session started with and every model the configuration names
 * under `models`; a choice takes effect from the next prompt, as `/model` does in `deft
 * interactive`. Anything else is refused with the list to choose from.
 */
import type { Session } from "../agent/session.ts";
import { createClient } from "../llm/client.ts";
import type { LoadedConfig } from "../config/load.ts";
import {
  AGENT_KEYS,
  type ConfigOverrides,
  type ResolvedModel,
  resolveRunConfig,
} from "../config/resolve.ts";
import type { AgentConfig } from "../config/schema.ts";

/** One model the client may pick. */
export interface ModelChoice {
  /** What the client sends back: the configured name (`models.NAME`), or the model id. */
  value: string;
  name: string;
  /** Provider and model id. */
  description: string;
}

/** The model the session started with first, then each configured one. */
export function modelChoices(loaded: LoadedConfig, first: ResolvedModel): ModelChoice[] {
  const choices: ModelChoice[] = [{
    value: first.name,
    name: first.name,
    description: `${first.provider.provider}/${first.settings.model}`,
  }];
  for (const [name, model] of Object.entries(loaded.config.models)) {
    if (name === first.name) continue;
    choices.push({ value: name, name, description: `${model.model_provider}/${model.model}` });
  }
  return choices;
}

/**
 * The model `value` names, ready to call: the one the session started with (`first`), or the
 * configured one of that name
 * (its provider's key and base URL from the environment and the file as for any run; the
 * launch's `-k` and `--model-base-url` only when it is the launch's provider). Throws an Error
 * saying what to choose instead.
 */
export function resolveChoice(
  loaded: LoadedConfig,
  value: unknown,
  first: ResolvedModel,
  launch: ConfigOverrides,
): ResolvedModel {
  const choices = modelChoices(loaded, first);
  const listed = choices.map((c) => `'${c.value}'`).join(", ");
  if (typeof value !== "string" || !choices.some((c) => c.value === value)) {
    const where = loaded.path ? ` in ${loaded.path}` : "";
    throw new Error(
      `unknown model ${JSON.stringify(value)}: choose one of ${listed} (the model the ` +
        `session started with and those configured under \`models\`${where}; add one there ` +
        `to offer it)`,
    );
  }
  if (value === first.name) return first;
  const { config } = loaded;
  const agentKey = AGENT_KEYS.find((k) => config.agents[k]) ?? AGENT_KEYS[0];
  const agent = { ...config.agents[agentKey], model: value } as AgentConfig;
  const sameProvider = config.models[value].model_provider ===
    (launch.provider ?? first.settings.model_provider);
  const overrides: ConfigOverrides = sameProvider
    ? { apiKey: launch.apiKey, modelBaseUrl: launch.modelBaseUrl }
    : {};
  try {
    return resolveRunConfig(
      { ...loaded, config: { ...config, agents: { ...config.agents, [agentKey]: agent } } },
      overrides,
    ).model;
  } catch (e) {
    throw new Error(`cannot use model '${value}': ${(e as Error).message}`);
  }
}

/** The session calls `model` from its next model request on. */
export function switchModel(session: Session, model: ResolvedModel): void {
  session.config.model = model;
  session.client = createClient(
    model,
    ({ attempt, delayMs, reason }) =>
      session.console.note(
        `model call failed (${reason}); retry ${attempt} in ${(delayMs / 1000).toFixed(1)} s`,
      ),
  );
}
