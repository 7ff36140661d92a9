/**
 * The places in the user's home folder whose contents the host runs or trusts on its own, at the
 * next login, shell, `git` or `ssh`: a workspace that holds them (`deft -w ~`) must not let the
 * model write them, any more than Deft's own control folders (./dirs.ts, ./control_cover.ts).
 */
import type { ControlPlace } from "./dirs.ts";
import type { SandboxMode } from "./sandbox_modes.ts";
import { isReadOnly } from "./read_only.ts";
import { readEnv } from "../env.ts";

/** Folders: made (0700) when missing, so that they can be covered. */
const HOME_FOLDERS: readonly [string, string][] = [
  [".ssh", "your SSH folder (authorized_keys, config)"],
  [".gnupg", "your GnuPG folder (its agent starts the programs named there)"],
  [".config/git", "git's user config folder"],
  ["bin", "your ~/bin (Debian's and Ubuntu's ~/.profile put it first on PATH)"],
];

/** Files that bash, sh and git read; an empty one means what a missing one does. */
const HOME_FILES: readonly [string, string][] = [
  [".bashrc", "your bash start-up file"],
  [".profile", "your login shell's start-up file"],
  [".bash_logout", "your bash log-out file"],
  [".gitconfig", "your git config"],
  [".bash_aliases", "your bash aliases (Debian's and Ubuntu's ~/.bashrc read them)"],
];

/**
 * zsh's files: covered where the user has zsh files at all or zsh is their shell (`$SHELL`: a
 * zsh with no files yet still reads a `~/.zshrc` the model would make); else nothing reads them.
 */
const ZSH_FILES = [".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"];

/**
 * The start-up files and folders in `home` that the model must never write: folders, and files
 * with what a missing one is made with (`missing`) so that it can be covered too.
 *
 * A missing file is made empty where that changes nothing; bash's login files are the exception:
 * bash reads the first of `~/.bash_profile`, `~/.bash_login`, `~/.profile`, so an empty
 * `.bash_profile` would hide an existing `.profile`. A missing `.bash_profile` is therefore made
 * with one line that reads the file bash would have read instead, and a missing `.bash_login`,
 * never read once `.bash_profile` exists, is made empty.
 */
export function homePlaces(home: string | undefined = readEnv("HOME")): ControlPlace[] {
  if (!home || !home.startsWith("/") || home === "/") return [];
  const at = (name: string) => `${home}/${name}`;
  const present = (name: string) => {
    try {
      Deno.lstatSync(at(name));
      return true;
    } catch {
      return false;
    }
  };
  const places: ControlPlace[] = HOME_FOLDERS.map(([name, what]) => ({ path: at(name), what }));
  for (const [name, what] of HOME_FILES) places.push({ path: at(name), what, missing: "" });
  const next = [".bash_login", ".profile"].find(present);
  places.push({
    path: at(".bash_profile"),
    what: "your bash login file",
    missing: next
      ? `# Made by Deft so that a model working in your home folder cannot make it; it reads\n` +
        `# ${next}, as bash did while this file was missing.\n. "$HOME/${next}"\n`
      : "",
  });
  places.push({ path: at(".bash_login"), what: "your bash login file", missing: "" });
  if (ZSH_FILES.some(present) || /(^|\/)zsh$/.test(readEnv("SHELL") ?? "")) {
    for (const name of ZSH_FILES) {
      places.push({ path: at(name), what: "your zsh start-up file", missing: "" });
    }
  }
  return places;
}

/**
 * One line for the start of a session whose workspace is, or holds, the home folder: what the
 * model may not write there. Undefined otherwise.
 */
export function homeWorkspaceNote(
  workspace: string,
  mode: SandboxMode,
  home: string | undefined = readEnv("HOME"),
): string | undefined {
  if (!home || !home.startsWith("/")) return undefined;
  const ws = workspace.replace(/\/+$/, "") || "/";
  const h = home.replace(/\/+$/, "") || "/";
  const holds = ws === "/" || h === ws || h.startsWith(`${ws}/`);
  if (!holds) return undefined;
  if (mode === "none") {
    return `the workspace ${workspace} holds your home folder ${home}, and with --sandbox none ` +
      `the model's shell may change anything there, your shell's start-up files and ~/.ssh included`;
  }
  if (isReadOnly({ sandbox: mode })) return undefined;
  return `the workspace ${workspace} holds your home folder ${home}: the model's shell and ` +
    `editors may not write your shell's start-up files, ~/.ssh, ~/.gnupg, your git config or ` +
    `Deft's own config, state and cache (use -w DIR for a narrower workspace)`;
}
