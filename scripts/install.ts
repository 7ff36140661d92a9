/**
 * `deno task install`: puts a `deft` command on PATH. It copies the Deno binary doing the install
 * to a place Deft owns (`$XDG_DATA_HOME/deft/deno/VERSION/deno`, else
 * `~/.local/share/deft/deno/VERSION/deno`), because the Deno that `npx` runs lives in npm's cache,
 * which `npm cache clean` or a cache eviction removes. It then writes a small launcher script into
 * `--dir DIR`, else `$XDG_BIN_HOME`, else `~/.local/bin`, that runs this checkout's main.ts with
 * that Deno (or, if it is gone, a `deno` on PATH) and exactly the permission flags of the `deft`
 * task. The launcher does not change directory, so the workspace defaults to wherever `deft` is
 * typed. A file already there that is not such a launcher is left alone unless `--force`.
 */
import { dirname, join, resolve } from "node:path";
import { deftFlags } from "./deft_flags.ts";

const ROOT = resolve(new URL("..", import.meta.url).pathname);

// The launcher's second line starts with this; it is how a later install knows the file is ours.
const MARK = "# deft, installed from ";
// Enough of a file to find the mark in: launchers are a few hundred bytes.
const SNIFF_BYTES = 4096;

const USAGE = "usage: deno task install [--dir DIR] [--force]\n" +
  "  --dir DIR  where the `deft` launcher goes (default: $XDG_BIN_HOME, else ~/.local/bin)\n" +
  "  --force    replace a `deft` there that this script did not write";

type Env = (name: string) => string | undefined;

/** The value of `--dir`, or undefined; throws when it has no value. */
function dirFlag(args: readonly string[]): string | undefined {
  const at = args.findIndex((a) => a === "--dir" || a.startsWith("--dir="));
  if (at < 0) return undefined;
  const value = args[at].includes("=") ? args[at].slice("--dir=".length) : args[at + 1];
  if (!value || value.startsWith("--")) throw new Error("--dir needs a folder, e.g. --dir ~/bin");
  return value;
}

/** Where the launcher goes: `--dir DIR`, `$XDG_BIN_HOME`, or `~/.local/bin`. */
export function binDir(args: readonly string[], env: Env): string {
  const dir = dirFlag(args);
  if (dir !== undefined) return resolve(dir);
  const xdg = env("XDG_BIN_HOME");
  if (xdg) return resolve(xdg);
  const home = env("HOME");
  if (!home) throw new Error("HOME is not set: pass the folder with --dir DIR");
  return join(home, ".local", "bin");
}

/** Where Deft keeps the Deno it installs: `$XDG_DATA_HOME/deft/deno/VERSION/deno` or under ~/.local/share. */
export function ownDenoPath(env: Env, version = Deno.version.deno): string {
  const xdg = env("XDG_DATA_HOME");
  const home = env("HOME");
  if (!xdg && !home) {
    throw new Error(
      "HOME is not set, so there is no place for Deft's Deno: set HOME or XDG_DATA_HOME",
    );
  }
  const data = xdg ? resolve(xdg) : join(home!, ".local", "share");
  return join(data, "deft", "deno", version, "deno");
}

/** The command-line flags this script does not know, if any. */
function unknownFlags(args: readonly string[]): string[] {
  const unknown: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--dir") i++;
    else if (a.startsWith("--dir=") || a === "--force") continue;
    else unknown.push(a);
  }
  return unknown;
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The launcher's text: a POSIX shell script that runs Deft with the task's flags. It uses the
 * Deno installed for it, else a `deno` on PATH (with a note saying how to repair the install),
 * and says clearly what to do when neither is there or the checkout moved.
 */
export function launcher(deno: string, root: string, flags: readonly string[]): string {
  const main = join(root, "main.ts");
  const again = `cd ${quote(root)} && npx -y deno@${Deno.version.deno} task install`;
  return [
    "#!/bin/sh",
    // A line break in the path would end the comment and run the rest: show it as "?".
    `${MARK}${
      root.replace(/[\r\n]/g, "?")
    } by \`deno task install\`; run it again after moving Deft.`,
    `deno=${quote(deno)}`,
    `if [ ! -f ${quote(main)} ]; then`,
    `  echo ${
      quote(
        `deft: Deft's checkout is no longer at ${root}: run ` +
          `\`npx -y deno@${Deno.version.deno} task install\` in it where it is now.`,
      )
    } >&2`,
    "  exit 127",
    "fi",
    `if [ ! -x "$deno" ]; then`,
    "  if command -v deno >/dev/null 2>&1; then",
    `    echo "deft: note: $deno (the Deno Deft installed) is gone; using $(command -v deno)." ` +
    `${quote(`To restore it: ${again}`)} >&2`,
    "    deno=deno",
    "  else",
    `    echo "deft: cannot start: $deno (the Deno Deft installed) is gone and there is no deno on PATH." ` +
    `${quote(`Reinstall: ${again}`)} >&2`,
    "    exit 127",
    "  fi",
    "fi",
    `exec "$deno" run ${flags.join(" ")} --config ${quote(join(root, "deno.json"))} ` +
    `${quote(main)} "$@"`,
    "",
  ].join("\n");
}

/** True when `text` (the start of a file) is a launcher `deno task install` wrote. */
export function isLauncher(text: string): boolean {
  const [first, second] = text.split("\n", 2);
  return first === "#!/bin/sh" && second !== undefined && second.startsWith(MARK) &&
    second.includes("by `deno task install`");
}

/**
 * Why `target` may not be replaced without `--force`, or undefined when it is absent or a
 * launcher of ours. Symbolic links are judged themselves, never followed: replacing one
 * replaces the link, and what it points to may be anything.
 */
export async function refusal(target: string): Promise<string | undefined> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(target);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  if (info.isSymlink) return `${target} is a symbolic link (to ${await Deno.readLink(target)})`;
  if (!info.isFile) return `${target} is not a regular file`;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(target);
  } catch (e) {
    return `${target} exists and cannot be read (${(e as Error).message})`;
  }
  try {
    const bytes = new Uint8Array(SNIFF_BYTES);
    const n = await file.read(bytes) ?? 0;
    const text = new TextDecoder().decode(bytes.subarray(0, n));
    return isLauncher(text)
      ? undefined
      : `${target} exists and was not written by \`deno task install\``;
  } finally {
    file.close();
  }
}

/** Writes `data` (or copies `from`) to `path` through a temporary file, so no one sees half of it. */
async function replaceAtomically(
  path: string,
  content: { text: string } | { from: string },
  mode: number,
): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const temp = `${path}.tmp-${Deno.pid}`;
  try {
    if ("text" in content) await Deno.writeTextFile(temp, content.text, { mode });
    else await Deno.copyFile(content.from, temp);
    await Deno.chmod(temp, mode);
    await Deno.rename(temp, path);
  } catch (e) {
    await Deno.remove(temp).catch(() => {});
    throw e;
  }
}

/** Copies the running Deno to `path`, unless the same binary is already there. */
async function installDeno(path: string): Promise<void> {
  const self = await Deno.realPath(Deno.execPath());
  if (self === await Deno.realPath(path).catch(() => "")) return;
  await replaceAtomically(path, { from: self }, 0o755);
}

async function main(): Promise<number> {
  const args = Deno.args;
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  const unknown = unknownFlags(args);
  if (unknown.length > 0) {
    console.error(`install: unknown argument ${unknown.join(" ")}\n${USAGE}`);
    return 2;
  }
  const env: Env = (name) => Deno.env.get(name);
  let dir: string;
  let deno: string;
  try {
    dir = binDir(args, env);
    deno = ownDenoPath(env);
  } catch (e) {
    console.error(`install: ${(e as Error).message}`);
    return 2;
  }
  const target = join(dir, "deft");
  const why = await refusal(target);
  if (why && !args.includes("--force")) {
    console.error(
      `install: ${why}; it is not a Deft launcher, so it was left alone. Move it away, ` +
        `choose another folder with --dir DIR, or pass --force to replace it.`,
    );
    return 1;
  }
  await installDeno(deno);
  await replaceAtomically(target, { text: launcher(deno, ROOT, deftFlags()) }, 0o755);
  if (why) console.log(`replaced ${target} (--force): ${why}`);
  console.log(`installed ${target} (Deno ${Deno.version.deno} at ${deno})`);
  const path = (Deno.env.get("PATH") ?? "").split(":").map((p) => resolve(p));
  if (!path.includes(dir)) {
    console.log(`${dir} is not on your PATH; add it, e.g.: export PATH="${dir}:$PATH"`);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main());
