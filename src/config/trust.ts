/**
 * Which folders may configure Deft. A config file found in the current folder (`./deft.yaml`,
 * `./trae_config.yaml`) belongs to the repository, and a repository is untrusted by default: a
 * cloned project must not start programs (`mcp_servers`), choose where the API key goes
 * (`model_providers`, `base_url`), carry credentials or relax the sandbox. Such a file may set only
 * harmless keys, layered over the user's own config; the rest is named in a warning. `deft trust`
 * records a folder in the user config (`trusted_folders`), after which its file sets everything.
 */
import { readEnv } from "../env.ts";
import { dirname, resolve, sep } from "node:path";
import { Document, isMap, isScalar, parseDocument } from "yaml";

/** Top-level keys an untrusted repository's config may set. */
const UNTRUSTED_KEYS: ReadonlySet<string> = new Set(["models", "agents", "lakeview"]);
/** `tool_settings` keys an untrusted config may set: limits, nothing that widens access. */
const UNTRUSTED_TOOL_SETTINGS: ReadonlySet<string> = new Set([
  "bash_timeout",
  "output_limit",
  "max_file_bytes",
]);

/** The user's own config file: `$XDG_CONFIG_HOME/deft/config.yaml` (or `~/.config/…`). */
export function userConfigPath(): string | undefined {
  const home = readEnv("HOME");
  const configHome = readEnv("XDG_CONFIG_HOME") ?? (home ? `${home}/.config` : undefined);
  return configHome ? `${configHome}/deft/config.yaml` : undefined;
}

/** The folders the user config trusts (absolute paths), or none when there is no user config. */
export async function trustedFolders(): Promise<string[]> {
  const text = await readUserConfig();
  if (text === undefined) return [];
  const value = parseDocument(text).get("trusted_folders");
  if (!value || typeof value !== "object" || !("items" in value)) return [];
  return (value as { items: unknown[] }).items
    .map((item) => isScalar(item) ? item.value : item)
    .filter((item): item is string => typeof item === "string");
}

/** True when `dir` (a real path) or one of its parents is trusted. */
export async function isTrusted(dir: string): Promise<boolean> {
  const folders = await trustedFolders();
  return folders.some((folder) =>
    dir === folder || dir.startsWith(folder.endsWith(sep) ? folder : folder + sep)
  );
}

/**
 * Adds (or with `revoke`, removes) `dir` in the user config's `trusted_folders`, keeping the
 * file's comments and layout. Returns the user config's path. Throws when there is no home.
 */
export async function setTrust(dir: string, revoke = false): Promise<string> {
  const path = userConfigPath();
  if (!path) throw new Error("Cannot find the user config folder: set HOME or XDG_CONFIG_HOME.");
  const text = (await readUserConfig()) ?? "";
  const parsed = parseDocument(text);
  if (parsed.errors.length > 0) {
    throw new Error(
      `${path} is not valid YAML (${parsed.errors[0].message.split("\n")[0]}); fix it first.`,
    );
  }
  const current = await trustedFolders();
  const next = revoke ? current.filter((f) => f !== dir) : [...new Set([...current, dir])];
  const doc: Document = isMap(parsed.contents) ? parsed : new Document({});
  doc.set("trusted_folders", doc.createNode(next));
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, doc.toString());
  return path;
}

/** The outcome of layering an untrusted repository config over the user's. */
export interface UntrustedLayer {
  /** YAML text to load: the user config with the repository's harmless keys set on top. */
  text: string;
  /** A warning naming the keys that were ignored, when there were any. */
  warning?: string;
}

/**
 * Keeps only the harmless keys of `repoText` (the repository's config at `repoPath`) and sets
 * them over `userText` (the user's config, possibly empty). Invalid YAML is returned unchanged so
 * the loader reports it with its position.
 */
export function layerUntrusted(repoText: string, repoPath: string, userText = ""): UntrustedLayer {
  const repo = parseDocument(repoText);
  if (repo.errors.length > 0 || !isMap(repo.contents)) return { text: repoText };
  const user = parseDocument(userText);
  if (user.errors.length > 0) return { text: repoText };
  const merged: Document = isMap(user.contents) ? user : new Document({});
  const ignored: string[] = [];
  for (const pair of repo.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (key === "tool_settings" && isMap(pair.value)) {
      for (const inner of pair.value.items) {
        const name = isScalar(inner.key) ? String(inner.key.value) : String(inner.key);
        if (UNTRUSTED_TOOL_SETTINGS.has(name)) merged.setIn([key, name], inner.value);
        else ignored.push(`${key}.${name}`);
      }
    } else if (UNTRUSTED_KEYS.has(key) && isMap(pair.value)) {
      for (const inner of pair.value.items) {
        const name = isScalar(inner.key) ? String(inner.key.value) : String(inner.key);
        merged.setIn([key, name], inner.value);
      }
    } else if (UNTRUSTED_KEYS.has(key)) {
      merged.set(key, pair.value);
    } else {
      ignored.push(key);
    }
  }
  const folder = dirname(resolve(repoPath));
  const warning = ignored.length === 0 ? undefined : `${repoPath}: this folder is not trusted, ` +
    `so its config may not set ${ignored.join(", ")} (ignored; they can run programs, choose ` +
    `endpoints, carry credentials or relax the sandbox). Put them in your own config ` +
    `(${userConfigPath() ?? "~/.config/deft/config.yaml"}), or run \`deft trust ${folder}\` if ` +
    `you trust this repository.`;
  return { text: merged.toString(), warning };
}

/** The user config's text, or undefined when it does not exist. */
export async function readUserConfig(): Promise<string | undefined> {
  const path = userConfigPath();
  if (!path) return undefined;
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}
