/**
 * Reads the YAML configuration file: finds it, parses it, checks it against the schema and reports
 * mistakes with the key's line and column. Unknown keys are warnings, not errors, so a config
 * written for a newer Deft (or Trae Agent's extras) still loads.
 */
import { LineCounter, loadYaml, parseDocument } from "./yaml.ts";
import { z } from "zod";
import { PROVIDERS } from "./providers.ts";
import { configCandidates } from "./locate.ts";
import {
  isTrustedBy,
  layerUntrusted,
  readUserConfig,
  setByRepository,
  setTrust,
  type TrustDecision,
} from "./trust.ts";
import { ConfigError } from "./errors.ts";
import { approvalsSchema } from "./approval_rules.ts";
import { readConfigFile } from "./read.ts";
import { deleteAt, describeIssue, parseYaml, position } from "./yaml_check.ts";
import { DEFAULT_TOOL_NAMES } from "../tools/catalog.ts";
import { SANDBOX_MODES } from "../policy/sandbox.ts";
import type { ShellEnvironmentPolicy } from "../policy/shell_env.ts";
import { hooksSchema } from "./hooks_schema.ts";
import { mcpServerSchema } from "./mcp_schema.ts";
import { fromFile, narrowedBy, networkSchema } from "./network.ts";
import { budgetSchema, lowerBudget } from "./budget.ts";

export { ConfigError } from "./errors.ts";
export { MAX_CONFIG_BYTES } from "./read.ts";

/** A loaded file: the checked configuration, where it came from, and warnings to show. */
export interface LoadedConfig {
  config: DeftConfig;
  path?: string;
  warnings: string[];
  /**
   * The file is a repository's own (`./deft.yaml`), read whole because its folder is trusted:
   * what it configures (its MCP servers) is the repository's word, not the user's.
   */
  fromRepository?: boolean;
  /** The file is a repository's own (`deft.yaml` in the project folder), trusted or not. */
  local?: boolean;
}

const positiveInt = z.number().int().positive();

const providerSchema = z.strictObject({
  provider: z.enum(PROVIDERS),
  api_key: z.string().optional(),
  base_url: z.string().optional(),
  api_version: z.string().optional(),
});

const modelSchema = z.strictObject({
  model_provider: z.string(),
  model: z.string().min(1),
  max_tokens: positiveInt.optional(),
  max_completion_tokens: positiveInt.optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  parallel_tool_calls: z.boolean().default(false),
  max_retries: z.number().int().min(0).max(100).default(10),
  /** Tokens the model accepts; context management keeps the conversation under it. */
  context_window: positiveInt.optional(),
  supports_tool_calling: z.boolean().optional(),
  candidate_count: positiveInt.optional(),
  stop_sequences: z.array(z.string()).optional(),
});

const agentSchema = z.strictObject({
  model: z.string(),
  max_steps: positiveInt.default(200),
  enable_lakeview: z.boolean().default(false),
  tools: z.array(z.string()).default([...DEFAULT_TOOL_NAMES]),
});

// Which variables the model's shell inherits; policy/shell_env.ts owns the meaning.
const shellEnvironmentSchema = z.strictObject({
  inherit: z.enum(["all", "core", "none"]).optional(),
  ignore_default_excludes: z.boolean().optional(),
  exclude: z.array(z.string()).optional(),
  include_only: z.array(z.string()).optional(),
  set: z.record(z.string(), z.string()).optional(),
}) satisfies z.ZodType<ShellEnvironmentPolicy>;

const configSchema = z.strictObject({
  model_providers: z.record(z.string(), providerSchema).default({}),
  models: z.record(z.string(), modelSchema).default({}),
  agents: z.record(z.string(), agentSchema).default({}),
  lakeview: z.strictObject({ model: z.string() }).optional(),
  // An MCP server Deft may start (stdio: `command`) or reach (streamable HTTP: `url`).
  mcp_servers: z.record(z.string(), mcpServerSchema).default({}),
  allow_mcp_servers: z.array(z.string()).default([]),
  // Unset unless a file says so: the default (workspace-write where bubblewrap works) is decided
  // in tool_settings.ts, which must tell a chosen `none` from no choice.
  sandbox: z.enum(SANDBOX_MODES).optional(),
  allow_network: z.boolean().default(false),
  /** The hosts the sandboxed shell may reach through Deft's proxy (config/network.ts). */
  network: networkSchema.optional(),
  /** A checkpoint of the workspace after each turn (src/agent/checkpoints.ts); false: none. */
  checkpoints: z.boolean().default(true),
  /** Child agents of the `task` tool (src/agent/subagent.ts); each key has a default there. */
  subagents: z.strictObject({
    /** Seconds a child may run before it is stopped. */
    deadline_seconds: z.number().positive().optional(),
    /** Steps a child may take. */
    max_steps: z.int().positive().optional(),
    /** Children running at once. */
    parallel: z.int().positive().optional(),
    /** How deep children may nest: 1, children start none of their own. */
    depth: z.int().nonnegative().optional(),
  }).optional(),
  /** When to ask before a tool call; unset: `never` for run, `commands` for interactive. */
  approval: z.enum(["never", "commands", "all"]).optional(),
  /** Approval rules (`allow`, `ask`, `deny` lists; config/approval_rules.ts). */
  approvals: approvalsSchema.optional(),
  /** Folders whose own config file may set every key (`deft trust`); only read from user config. */
  trusted_folders: z.array(z.string()).default([]),
  /** Which variables the model's shell inherits (policy/shell_env.ts). */
  shell_environment: shellEnvironmentSchema.optional(),
  /** USD per million tokens by model name; overrides src/llm/prices.ts's table. */
  prices: z.record(
    z.string(),
    z.strictObject({
      input: z.number().min(0),
      output: z.number().min(0),
      cache_read: z.number().min(0).optional(),
      cache_write: z.number().min(0).optional(),
    }),
  ).default({}),
  /**
   * How Deft runs its tools in a container, once `--docker-image`, `--dockerfile-path`,
   * `--docker-image-file` or `--docker-container-id` asks for one (those name a run's container,
   * so they are flags only; the flags win). Only the
   * user's config sets these: an untrusted repository's file cannot (config/trust.ts).
   */
  container: z.strictObject({
    /** `docker` or `podman`; unset: docker when its daemon answers, else podman. */
    runtime: z.enum(["docker", "podman"]).optional(),
    /** Keep the container Deft started (`--docker-keep`). */
    keep: z.boolean().default(false),
    /** The container's memory limit, in the runtime's syntax (`4g`, `512m`). */
    memory: z.string().regex(/^[0-9]+[bkmg]?$/i, "a size like 4g or 512m").default("4g"),
    /** The most processes the container may hold. */
    pids_limit: positiveInt.default(4096),
    /** Give the container the host's network (default: none at all). */
    allow_network: z.boolean().default(false),
    /** Podman's OCI runtime (default runc when installed: crun fails on cgroups-v1 hosts). */
    podman_runtime: z.string().regex(/^[A-Za-z0-9._/-]+$/).optional(),
  }).default({ keep: false, memory: "4g", pids_limit: 4096, allow_network: false }),
  /** Hard caps on a session's spend (config/budget.ts); a repository's file may only lower them. */
  budget: budgetSchema.optional(),
  /** Programs run at points of a session (Claude Code's shape; src/hooks/README.md, docs/hooks.md). */
  hooks: hooksSchema.default({}),
  /** Tool settings (all optional; defaults live with the tools). */
  tool_settings: z.strictObject({
    bash_timeout: z.number().positive().optional(),
    output_limit: positiveInt.optional(),
    max_file_bytes: positiveInt.optional(),
    ckg_dir: z.string().optional(),
    /** Seconds a tool call may run, per tool name; `default` for the rest. */
    deadlines: z.record(z.string(), z.number().positive()).optional(),
  }).default({}),
});

/**
 * The whole checked configuration, as the schema above gives it back (defaults filled in,
 * Trae's `http_url` folded into `url`). `schema.ts` names its parts.
 */
export type DeftConfig = z.output<typeof configSchema>;

/** The configuration used when no file is found. */
export function defaultConfig(): DeftConfig {
  return configSchema.parse({});
}

/** How `loadConfig` treats a repository's config file in a folder that is not trusted. */
export interface LoadOptions {
  /**
   * Asked when the file sets keys the folder may not set: true trusts the folder (recorded in the
   * user config like `deft trust`) and reads the file whole. It says so to the user itself; the
   * long warning is then left out of `warnings`.
   */
  onUntrusted?: TrustDecision;
  /**
   * The project folder whose `deft.yaml` is read and whose trust counts (an ACP session's
   * folder); default: the current directory.
   */
  folder?: string;
}

/** Finds and loads the configuration; no file at all gives the defaults. */
export async function loadConfig(
  explicit?: string,
  options: LoadOptions = {},
): Promise<LoadedConfig> {
  for (const candidate of configCandidates(explicit, options.folder)) {
    let text: string;
    try {
      text = await readConfigFile(candidate.path);
    } catch (e) {
      if (e instanceof ConfigError) throw e;
      // A default location Deno may not read (narrowed --allow-read) counts as no file there.
      const absent = e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotCapable;
      if (absent && !candidate.explicit) continue;
      if (e instanceof Deno.errors.NotFound) {
        throw new ConfigError(
          `Config file not found: ${candidate.path}. Check the path given with --config-file ` +
            `or DEFT_CONFIG; config.example.yaml shows every key.`,
        );
      }
      throw new ConfigError(`Cannot read config file ${candidate.path}: ${(e as Error).message}`);
    }
    await loadYaml();
    if (candidate.local) {
      return { ...await loadLocalConfig(text, candidate.path, options), local: true };
    }
    return parseConfig(text, candidate.path);
  }
  return { config: defaultConfig(), warnings: [] };
}

/**
 * A repository's own config file: whole when its folder is trusted, else only harmless keys over
 * the user's config. The user's config is checked in full first: a mistake in it is an error
 * naming it, never a reason to read the repository's file some other way.
 */
async function loadLocalConfig(
  text: string,
  path: string,
  options: LoadOptions,
): Promise<LoadedConfig> {
  const user = await loadUserConfig();
  const folders = user?.config.trusted_folders ?? [];
  const folder = await Deno.realPath(options.folder ?? ".");
  // Trusted or not, the repository's budget only lowers the user's caps.
  const capped = (loaded: LoadedConfig, repository: unknown) => {
    const budget = lowerBudget(user?.config.budget, repositoryBudget(repository, path));
    return { ...loaded, config: { ...loaded.config, budget } };
  };
  if (await isTrustedBy(folder, folders)) {
    const whole = parseConfig(text, path);
    return { ...capped(whole, whole.config.budget), fromRepository: true };
  }
  // The repository's YAML is checked on its own, so its mistakes are reported at their position.
  const { data: repositoryData } = parseYaml(text, path);
  const repository = (repositoryData as Record<string, unknown> | null)?.budget;
  const layer = layerUntrusted(text, path, user?.text);
  let told = false;
  if (layer.ignored.length > 0 && options.onUntrusted) {
    if (await options.onUntrusted({ path, folder, ignored: layer.ignored })) {
      await setTrust(user && { path: user.path, text: user.text }, folder);
      return { ...capped(parseConfig(text, path), repository), fromRepository: true };
    }
    told = true;
  }
  let loaded: LoadedConfig;
  try {
    // Positions in messages point into the file each key came from, not into the layered text.
    loaded = parseConfig(layer.text, path, [
      { text, path, owns: setByRepository },
      ...(user ? [{ text: user.text, path: user.path, owns: () => true }] : []),
    ]);
  } catch (e) {
    if (!(e instanceof ConfigError) || layer.ignored.length === 0) throw e;
    throw new ConfigError(
      `${e.message}\n(${path} is in a folder you have not trusted, so its ` +
        `${layer.ignored.join(", ")} ${layer.ignored.length === 1 ? "was" : "were"} ignored; ` +
        `run \`deft trust ${folder}\` if you trust this repository.)`,
    );
  }
  if (layer.warning && !told) loaded.warnings.unshift(layer.warning);
  narrowNetwork(loaded, text, path, user?.path);
  return capped(loaded, repository);
}

/** A repository file's `budget`, checked; a mistake in it is an error naming the file. */
function repositoryBudget(value: unknown, path: string) {
  if (value === undefined || value === null) return undefined;
  const parsed = budgetSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ConfigError(
    `${path}: 'budget${issue.path.length ? "." + issue.path.join(".") : ""}': ` +
      describeIssue(issue),
  );
}

/**
 * The network list of a layered config: the user's (from `userPath`), narrowed by the untrusted
 * repository's own `network` section (config/network.ts), never widened.
 */
function narrowNetwork(
  loaded: LoadedConfig,
  repoText: string,
  repoPath: string,
  userPath: string | undefined,
): void {
  const user = loaded.config.network && fromFile(loaded.config.network, userPath);
  const { data, doc, lineCounter } = parseYaml(repoText, repoPath);
  const section = (data as Record<string, unknown>)?.network;
  if (section === undefined) {
    loaded.config.network = user;
    return;
  }
  const parsed = networkSchema.safeParse(section);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const key = ["network", ...i.path];
        return `${repoPath}: '${key.join(".")}'${position(doc, lineCounter, key)}: ${
          describeIssue(i)
        }`;
      }).join("\n"),
    );
  }
  const { list, dropped } = narrowedBy(user, fromFile(parsed.data, repoPath));
  loaded.config.network = list;
  if (dropped.length > 0) {
    loaded.warnings.push(
      `${repoPath}: network.allow may only narrow your own list in a folder you have not ` +
        `trusted; ${dropped.map((e) => JSON.stringify(e.text)).join(", ")} ` +
        `${dropped.length === 1 ? "is" : "are"} not in it and ${
          dropped.length === 1 ? "was" : "were"
        } ignored.`,
    );
  }
}

/**
 * The user's own config file, checked in full (YAML and schema), with its text; undefined when
 * there is none. Throws a ConfigError naming the file when it cannot be read or is invalid.
 */
export async function loadUserConfig(): Promise<
  (LoadedConfig & { path: string; text: string }) | undefined
> {
  const user = await readUserConfig();
  if (!user) return undefined;
  await loadYaml();
  return { ...parseConfig(user.text, user.path), path: user.path, text: user.text };
}

/**
 * A file a layered config text was made from: positions of the keys it `owns` are looked up in
 * it (a message names the file when it is not the one being loaded).
 */
export interface ConfigSource {
  text: string;
  path: string;
  owns: (keyPath: readonly PropertyKey[]) => boolean;
}

/**
 * Parses and checks config text; `path` names the file in messages. For a text layered from
 * other files (an untrusted repository's over the user's), `sources` says where each key's
 * position is to be found.
 */
export function parseConfig(
  text: string,
  path = "<config>",
  sources?: readonly ConfigSource[],
): LoadedConfig {
  const { doc, lineCounter, data } = parseYaml(text, path);
  const located = sources?.map((s) => {
    const lines = new LineCounter();
    return { ...s, doc: parseDocument(s.text, { lineCounter: lines, uniqueKeys: false }), lines };
  });
  const where = (keyPath: PropertyKey[]) => {
    const source = located?.find((s) => s.owns(keyPath) && s.doc.hasIn(keyPath.slice(0, 2)));
    if (!source) return position(doc, lineCounter, keyPath);
    const at = position(source.doc, source.lines, keyPath);
    return source.path === path || at === "" ? at : at.replace(" (", ` (${source.path}, `);
  };
  const warnings: string[] = [];
  let result = configSchema.safeParse(data);
  if (!result.success) {
    const unknown = result.error.issues.filter((i) => i.code === "unrecognized_keys");
    const real = result.error.issues.filter((i) => i.code !== "unrecognized_keys");
    if (real.length > 0) {
      const messages = real.map((i) =>
        `${path}: '${i.path.join(".") || "(root)"}'${where(i.path)}: ${describeIssue(i)}`
      );
      throw new ConfigError(messages.join("\n"));
    }
    for (const issue of unknown) {
      for (const key of (issue as { keys: string[] }).keys) {
        const full = [...issue.path, key];
        warnings.push(`${path}: unknown key '${full.join(".")}'${where(full)} is ignored`);
        deleteAt(data, full);
      }
    }
    result = configSchema.safeParse(data);
    if (!result.success) throw new ConfigError(`${path}: ${result.error.message}`);
  }
  const config = result.data;
  // A layered text's list is marked by the caller, which knows whose file each part is.
  if (config.network && !sources) config.network = fromFile(config.network, path);
  checkReferences(config, path, where);
  return { config, path, warnings };
}

function checkReferences(
  config: DeftConfig,
  path: string,
  where: (keyPath: PropertyKey[]) => string,
): void {
  const problems: string[] = [];
  for (const [name, model] of Object.entries(config.models)) {
    if (!config.model_providers[model.model_provider]) {
      const known = Object.keys(config.model_providers).join(", ") || "none defined";
      problems.push(
        `'models.${name}.model_provider'${where(["models", name, "model_provider"])}: ` +
          `model provider '${model.model_provider}' is not defined under model_providers ` +
          `(defined: ${known})`,
      );
    }
  }
  for (const [name, agent] of Object.entries(config.agents)) {
    if (!config.models[agent.model]) {
      problems.push(
        `'agents.${name}.model'${where(["agents", name, "model"])}: model '${agent.model}' is ` +
          `not defined under models`,
      );
    }
  }
  if (config.lakeview && !config.models[config.lakeview.model]) {
    problems.push(
      `'lakeview.model'${where(["lakeview", "model"])}: model '${config.lakeview.model}' is not ` +
        `defined under models`,
    );
  }
  config.allow_mcp_servers.forEach((name, i) => {
    if (!config.mcp_servers[name]) {
      problems.push(
        `'allow_mcp_servers[${i}]'${where(["allow_mcp_servers", i])}: MCP server '${name}' is ` +
          `not defined under mcp_servers`,
      );
    }
  });
  for (const [name, server] of Object.entries(config.mcp_servers)) {
    if (!server.command && !server.url) {
      problems.push(
        `'mcp_servers.${name}'${where(["mcp_servers", name])}: give either 'command' (stdio) ` +
          `or 'url' (streamable HTTP)`,
      );
    }
  }
  if (config.network && config.allow_network) {
    problems.push(
      `'allow_network'${where(["allow_network"])}: gives the sandbox the whole host network, ` +
        `so 'network' would not be used; remove one of them (network.allow lists the hosts ` +
        `to allow)`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `${path}: ${p}`).join("\n"));
}
