/** `deft trust [DIR] [--revoke] [--list]`: which folders' own config files may set every key. */
import { resolve } from "node:path";
import { setTrust } from "../config/trust.ts";
import { loadUserConfig } from "../config/load.ts";
import { terminalLine } from "../policy/terminal_text.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";

/** Options of `deft trust`. */
export interface TrustOptions {
  revoke?: boolean;
  list?: boolean;
}

/** Trusts (or forgets) `dir`, or lists the trusted folders; returns the exit code. */
export async function trustCommand(dir: string | undefined, opts: TrustOptions): Promise<number> {
  // Checked in full first: an unreadable or invalid user config is an error naming it (exit 2).
  const user = await loadUserConfig();
  if (opts.list) {
    const folders = user?.config.trusted_folders ?? [];
    await writeStdout(folders.map((f) => `${f}\n`).join(""));
    return 0;
  }
  const wanted = resolve(dir ?? ".");
  let real: string;
  try {
    real = await Deno.realPath(wanted);
    if (!(await Deno.stat(real)).isDirectory) throw new Error("not a directory");
  } catch {
    throw new UsageError(`Cannot trust ${shown(wanted)}: it is not an existing folder.`);
  }
  const path = await setTrust(user, real, opts.revoke);
  writeStderr(
    opts.revoke
      ? `${shown(real)} is no longer trusted (recorded in ${shown(path)}).`
      : `${
        shown(real)
      } is trusted: its deft.yaml or trae_config.yaml may now set every key, including ` +
        `mcp_servers, model_providers and sandbox (recorded in ${shown(path)}).`,
  );
  return 0;
}

/** A path on one line, its control characters spelled out (a folder name may hold anything). */
function shown(path: string): string {
  return terminalLine(path, { style: "escape", tabs: false });
}
