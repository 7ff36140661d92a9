/**
 * Which folders may configure Deft. A config file found in the current folder (`./deft.yaml`,
 * `./trae_config.yaml`) belongs to the repository, and a repository is untrusted by default: a
 * cloned project must not start programs (`mcp_servers`), choose where the API key goes
 * (`model_providers`, `base_url`), carry credentials or relax the sandbox. Such a file may set only
 * harmless keys, layered over the user's own config; the rest is named in a warning. `deft trust`
 * records a folder in the user config (`trusted_folders`), after which its file sets everything.
 */
import { deftConfigDir } from "../policy/dirs.ts";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { Document, isMap, isScalar, loadYaml, parseDocument } from "./yaml.ts";
import { ConfigError } from "./errors.ts";
import { MAX_CONFIG_BYTES, readConfigFile } from "./read.ts";
import { readOwnText } from "../policy/own_file.ts";
import { terminalLine } from "../policy/terminal_text.ts";

/** Top-level keys an untrusted repository's config may set. */
const UNTRUSTED_KEYS: ReadonlySet<string> = new Set(["models", "agents", "lakeview"]);
/** `tool_settings` keys an untrusted config may set: limits, nothing that widens access. */
const UNTRUSTED_TOOL_SETTINGS: ReadonlySet<string> = new Set([
  "bash_timeout",
  "output_limit",
  "max_file_bytes",
]);

/**
 * The file Deft writes into a folder it creates for other people's code (a batch task's folder,
 * above the task's clone). Trust given to a parent folder stops there: the clone's config is not
 * the user's. The marker lives above the clone, in Deft's folder, where the repository's own
 * files cannot remove it.
 */
export const NOT_TRUSTED_MARKER = ".deft-not-trusted";

/** The user's own config file: `$XDG_CONFIG_HOME/deft/config.yaml` (or `~/.config/…`). */
export function userConfigPath(): string | undefined {
  const dir = deftConfigDir();
  return dir ? `${dir}/config.yaml` : undefined;
}

/**
 * The user config's path and text, or undefined when there is none (no home, no file, or a
 * place this Deno may not read: none of these trusts anything). Any other failure is an error
 * naming the file: a config Deft cannot read is never a reason to trust something else.
 */
export async function readUserConfig(): Promise<{ path: string; text: string } | undefined> {
  const path = userConfigPath();
  if (!path) return undefined;
  let text: string;
  try {
    text = await readConfigFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotCapable) return undefined;
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(
      `Cannot read your config file ${path}: ${(e as Error).message}. Fix its permissions, ` +
        `or move it away to start from the defaults.`,
    );
  }
  await loadYaml();
  return { path, text };
}

/**
 * True when the real path `dir` is trusted by `folders` (the user config's `trusted_folders`):
 * it is one of them or lies inside one (by whole path components: trusting `/a/work` does not
 * trust `/a/work-evil`), and no folder between them holds NOT_TRUSTED_MARKER. Entries that are
 * not absolute paths trust nothing (relative to what?).
 */
export async function isTrustedBy(dir: string, folders: readonly string[]): Promise<boolean> {
  let nearest: string | undefined;
  for (const entry of folders) {
    if (!isAbsolute(entry)) continue;
    const folder = resolve(entry);
    const inside = dir === folder || dir.startsWith(folder.endsWith(sep) ? folder : folder + sep);
    if (inside && (nearest === undefined || folder.length > nearest.length)) nearest = folder;
  }
  if (nearest === undefined) return false;
  // The folder itself (trusted by name) is not checked; everything below the entry is.
  for (let d = dir; d !== nearest && d !== dirname(d); d = dirname(d)) {
    if (await markedNotTrusted(d)) return false;
  }
  return true;
}

/** Whether `dir` holds the marker; a folder that cannot be looked into is not trusted either. */
async function markedNotTrusted(dir: string): Promise<boolean> {
  try {
    await Deno.lstat(join(dir, NOT_TRUSTED_MARKER));
    return true;
  } catch (e) {
    return !(e instanceof Deno.errors.NotFound);
  }
}

/** Writes the marker into `dir`, a folder Deft created for code that is not the user's. */
export async function markNotTrusted(dir: string): Promise<void> {
  await Deno.writeTextFile(
    join(dir, NOT_TRUSTED_MARKER),
    "Deft created this folder for a batch task. Folders below it are never trusted through " +
      "`trusted_folders` entries above it (see docs/configuration.md).\n",
  );
}

/** The `trusted_folders` strings of a parsed user config (its checked form lives in load.ts). */
function trustedFoldersOf(text: string): string[] {
  const value = parseDocument(text, { uniqueKeys: false }).get("trusted_folders");
  if (!value || typeof value !== "object" || !("items" in value)) return [];
  return (value as { items: unknown[] }).items
    .map((item) => isScalar(item) ? item.value : item)
    .filter((item): item is string => typeof item === "string");
}

/**
 * The user config `user` (its path and text, already checked by the loader; undefined when there
 * is none) with `dir` added to `trusted_folders`, or removed with `revoke`, keeping the file's
 * comments and layout. Writes it and returns its path. Throws when there is no home.
 */
export async function setTrust(
  user: { path: string; text: string } | undefined,
  dir: string,
  revoke = false,
): Promise<string> {
  const path = user?.path ?? userConfigPath();
  if (!path) {
    throw new ConfigError("Cannot find the user config folder: set HOME or XDG_CONFIG_HOME.");
  }
  const text = user?.text ?? "";
  await loadYaml();
  const parsed = parseDocument(text);
  if (parsed.errors.length > 0) {
    throw new ConfigError(
      `${path} is not valid YAML (${parsed.errors[0].message.split("\n")[0]}); fix it first.`,
    );
  }
  const current = trustedFoldersOf(text);
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
  /** The keys (`mcp_servers`, `tool_settings.sandbox` …) that were ignored, in file order. */
  ignored: string[];
}

/**
 * Whether the value at `keyPath` of a layered config came from the repository's file (the keys
 * an untrusted file may set) rather than from the user's.
 */
export function setByRepository(keyPath: readonly PropertyKey[]): boolean {
  const [top, inner] = keyPath.map(String);
  if (top === "tool_settings") return inner !== undefined && UNTRUSTED_TOOL_SETTINGS.has(inner);
  return UNTRUSTED_KEYS.has(top);
}

/**
 * Keeps only the harmless keys of `repoText` (the repository's config at `repoPath`) and sets
 * them over `userText` (the user's config, possibly empty). The loader checks both texts first
 * (with positions in its messages); YAML that is still not a mapping here is an error, never a
 * reason to load the repository's text as it is.
 */
export function layerUntrusted(repoText: string, repoPath: string, userText = ""): UntrustedLayer {
  const repo = parseDocument(repoText, { uniqueKeys: false });
  const user = parseDocument(userText, { uniqueKeys: false });
  for (
    const [doc, path] of [[repo, repoPath], [user, userConfigPath() ?? "your config"]] as const
  ) {
    if (doc.errors.length > 0 || (doc.contents !== null && !isMap(doc.contents))) {
      throw new ConfigError(`${path}: not a YAML mapping of config keys; fix it first.`);
    }
  }
  if (!isMap(repo.contents)) return { text: userText, ignored: [] };
  const merged: Document = isMap(user.contents) ? user : new Document({});
  const ignored: string[] = [];
  for (const pair of repo.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    // A repository's approval rules are read on their own (config/approval_rules.ts): its deny
    // and ask rules apply, trusted or not; its allow rules never do.
    if (key === "approvals") continue;
    // Its network list is read on its own too (load.ts): it may narrow the user's, not widen.
    if (key === "network") continue;
    // A repository's budget may only lower the user's caps: the loader applies it on its own.
    if (key === "budget") continue;
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
  const keys = ignored.map(oneLine).join(", ");
  const warning = ignored.length === 0 ? undefined : `${oneLine(repoPath)}: this folder is not ` +
    `trusted, so its config may not set ${keys} (ignored; they can run programs, choose ` +
    `endpoints, carry credentials or relax the sandbox). Put them in your own config ` +
    `(${userConfigPath() ?? "~/.config/deft/config.yaml"}), or run ` +
    `\`deft trust ${oneLine(folder)}\` if you trust this repository.`;
  return { text: merged.toString(), warning, ignored };
}

/** A repository's config file that sets keys its untrusted folder may not set. */
export interface UntrustedConfig {
  /** The config file, as found (`deft.yaml`). */
  path: string;
  /** The folder to trust: the real path of the one that holds it. */
  folder: string;
  /** The keys that are ignored unless the folder is trusted. */
  ignored: string[];
}

/**
 * Decides about an untrusted repository config: true trusts the folder now (the loader records
 * it as `deft trust` does and reads the file whole), false goes on without the ignored keys.
 */
export type TrustDecision = (untrusted: UntrustedConfig) => Promise<boolean>;

/** The user's side of `askToTrust`. */
export interface TrustAsking {
  /** Someone can answer (standard input is a terminal). */
  terminal: boolean;
  /** Puts a question and returns the answer line, null at end of input. */
  ask(question: string): Promise<string | null>;
  /** Writes a line to the user (stderr). */
  write(text: string): void;
  /** A file listing the folders the user declined to trust (asked once, never again). */
  declinedFile?: string;
}

/**
 * The decision a command makes on a terminal: asks once whether to trust the folder, naming the
 * ignored keys (control characters made visible); a "no" is remembered in `declinedFile`, so the
 * next start prints the notice instead of asking. Without a terminal, or after a "no": one line
 * naming the ignored keys and `deft trust`.
 */
export function askToTrust(asking: TrustAsking): TrustDecision {
  return async ({ path, folder, ignored }) => {
    const keys = ignored.map(oneLine).join(", ");
    const shownFolder = oneLine(folder);
    const notice = () =>
      asking.write(
        `note: ${oneLine(path)} is in a folder you have not ` +
          `trusted, so its ${keys} ${ignored.length === 1 ? "is" : "are"} ignored; run ` +
          `\`deft trust ${shownFolder}\` to let it set ${ignored.length === 1 ? "it" : "them"}.`,
      );
    if (!asking.terminal || await declined(asking.declinedFile, folder)) {
      notice();
      return false;
    }
    asking.write(
      `${oneLine(path)} sets ${keys}, which only a trusted folder's ` +
        "config may set (they can start programs, choose where your API key goes, carry " +
        "credentials or relax the sandbox).",
    );
    const answer = await asking.ask(
      `Trust ${shownFolder}, so its config sets every key (as \`deft trust\` does)? [y/N] `,
    );
    if (answer !== null && /^\s*y(es)?\s*$/i.test(answer)) return true;
    // Only a "no" is remembered: no answer at all (end of input) asks again next time.
    if (answer !== null && asking.declinedFile) {
      await remember(asking.declinedFile, folder).catch(() => {});
    }
    asking.write(
      `not trusted: going on without ${keys}. \`deft trust ${shownFolder}\` changes that later.`,
    );
    return false;
  };
}

/**
 * A key, path or folder name as the user must judge it: on one line, every control character
 * spelled out (`\x0a`). A key holding a newline must not draw a line of its own, such as a fake
 * "already trusted" under the question.
 */
function oneLine(text: string): string {
  return terminalLine(text, { style: "escape", tabs: false });
}

async function declined(file: string | undefined, folder: string): Promise<boolean> {
  if (!file) return false;
  // Deft's own list, read as its files are (never a FIFO or device, bounded); else none declined.
  const text = await readOwnText(file, { limit: MAX_CONFIG_BYTES, what: "the declined folders" })
    .catch(() => "");
  return text.split("\n").includes(folder);
}

async function remember(file: string, folder: string): Promise<void> {
  // A folder name with a line break cannot be recorded one per line: it is then asked again.
  if (folder.includes("\n")) return;
  await Deno.mkdir(dirname(file), { recursive: true });
  await Deno.writeTextFile(file, `${folder}\n`, { append: true });
}
