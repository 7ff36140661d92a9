/**
 * `deno task install`: puts a `deft` command on PATH. It writes a small launcher script into
 * `--dir DIR`, else `$XDG_BIN_HOME`, else `~/.local/bin`, that runs this checkout's main.ts with
 * the Deno binary doing the install and exactly the permission flags of the `deft` task. The
 * launcher does not change directory, so the workspace defaults to wherever `deft` is typed.
 */
import { join, resolve } from "node:path";
import { deftFlags } from "./deft_flags.ts";

const ROOT = resolve(new URL("..", import.meta.url).pathname);

/** Where the launcher goes: `--dir DIR`, `$XDG_BIN_HOME`, or `~/.local/bin`. */
export function binDir(args: readonly string[], env: (name: string) => string | undefined): string {
  const at = args.findIndex((a) => a === "--dir" || a.startsWith("--dir="));
  if (at >= 0) {
    const value = args[at].includes("=") ? args[at].slice("--dir=".length) : args[at + 1];
    if (!value) throw new Error("--dir needs a folder, e.g. --dir ~/bin");
    return resolve(value);
  }
  const xdg = env("XDG_BIN_HOME");
  if (xdg) return resolve(xdg);
  const home = env("HOME");
  if (!home) throw new Error("HOME is not set: pass the folder with --dir DIR");
  return join(home, ".local", "bin");
}

/** The launcher's text: a POSIX shell script that runs Deft with the task's flags. */
export function launcher(deno: string, root: string, flags: readonly string[]): string {
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  return [
    "#!/bin/sh",
    `# deft, installed from ${root} by \`deno task install\`; run it again after moving Deft.`,
    `exec ${quote(deno)} run ${flags.join(" ")} --config ${quote(join(root, "deno.json"))} ` +
    `${quote(join(root, "main.ts"))} "$@"`,
    "",
  ].join("\n");
}

async function main(): Promise<number> {
  const args = Deno.args;
  if (args.includes("--help") || args.includes("-h")) {
    console.log("usage: deno task install [--dir DIR]   (default: $XDG_BIN_HOME or ~/.local/bin)");
    return 0;
  }
  let dir: string;
  try {
    dir = binDir(args, (name) => Deno.env.get(name));
  } catch (e) {
    console.error(`install: ${(e as Error).message}`);
    return 2;
  }
  await Deno.mkdir(dir, { recursive: true });
  const target = join(dir, "deft");
  const temp = `${target}.tmp-${Deno.pid}`;
  await Deno.writeTextFile(temp, launcher(Deno.execPath(), ROOT, deftFlags()), { mode: 0o755 });
  await Deno.chmod(temp, 0o755);
  await Deno.rename(temp, target);
  console.log(`installed ${target}`);
  const path = (Deno.env.get("PATH") ?? "").split(":").map((p) => resolve(p));
  if (!path.includes(dir)) {
    console.log(`${dir} is not on your PATH; add it, e.g.: export PATH="${dir}:$PATH"`);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main());
