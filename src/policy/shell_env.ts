/**
 * The environment the model's shell starts with, in the spirit of Codex CLI's shell environment
 * policy. By default it inherits Deft's environment minus every variable whose name looks secret
 * (KEY, SECRET, TOKEN, PASSWORD, CREDENTIAL), so `env` in the shell shows no API key; the
 * `shell_environment` config section can start from the core variables only or from nothing,
 * exclude more names, keep only some, and set fixed values.
 */
import { envObject } from "../env.ts";
import { isSecretName } from "./secrets.ts";

/** The `shell_environment` config section. */
export interface ShellEnvironmentPolicy {
  /** Start from all of Deft's variables (default), only the core ones, or none. */
  inherit?: "all" | "core" | "none";
  /** Keep secret-looking variables too (default false: they are dropped). */
  ignore_default_excludes?: boolean;
  /** Glob patterns (`*` and `?`, any case) of names to drop. */
  exclude?: string[];
  /** When given, only names matching one of these patterns are kept (before `set`). */
  include_only?: string[];
  /** Variables set to fixed values, after everything else. */
  set?: Record<string, string>;
}

/** Variables a shell needs to work normally; what `inherit: core` keeps. */
export const CORE_VARIABLES: readonly string[] = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "USER",
  "USERNAME",
  "TMPDIR",
  "TEMP",
  "TMP",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "TERM",
  "TZ",
];

/**
 * The shell's environment under `policy`, computed from `env` (Deft's own). `knownSecrets` are
 * values Deft holds (API keys): a variable carrying one is dropped whatever its name.
 *
 * @example
 * ```ts
 * shellEnvironment({}, { PATH: "/bin", GITHUB_TOKEN: "ghp_x" }); // { PATH: "/bin" }
 * ```
 */
export function shellEnvironment(
  policy: ShellEnvironmentPolicy = {},
  env: Record<string, string> = envObject(),
  knownSecrets: readonly string[] = [],
): Record<string, string> {
  const inherit = policy.inherit ?? "all";
  const exclude = (policy.exclude ?? []).map(globToRegExp);
  const includeOnly = policy.include_only?.map(globToRegExp);
  const secrets = new Set(knownSecrets.filter((s) => s.length > 0));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (inherit === "none") break;
    if (inherit === "core" && !CORE_VARIABLES.includes(name)) continue;
    if (!policy.ignore_default_excludes && (isSecretName(name) || secrets.has(value))) continue;
    if (exclude.some((re) => re.test(name))) continue;
    if (includeOnly && !includeOnly.some((re) => re.test(name))) continue;
    // Exported bash functions (`BASH_FUNC_x%%`) are code that runs in the shell, not settings.
    if (name.startsWith("BASH_FUNC_")) continue;
    out[name] = value;
  }
  Object.assign(out, policy.set ?? {});
  return out;
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "i");
}
