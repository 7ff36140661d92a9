/**
 * The folder the user typed `deft` in. `deno task deft` runs Deft from its own checkout and says
 * where the user was in `INIT_CWD`; without this, `deft run` would default to working on Deft's
 * own source, and relative paths (`-w repo`, `--patch-path fix.patch`) would land in the checkout.
 */
// No node:path here: the first node: module costs every start (help, --version) ~6 ms.
import { readEnv } from "../env.ts";

/**
 * Moves the process to the user's folder when Deft was started by `deno task` from its checkout:
 * the current directory is the checkout holding `entryUrl` and its `deno.json` (where `deno task`
 * runs), and `INIT_CWD` names another existing folder. A bundle (`dist/deft.js`) has no
 * `deno.json` beside it, so it never moves. An `INIT_CWD` inherited from an outer task (a test run, an npm script) is ignored unless
 * the process really runs in the checkout. Returns the folder moved to, if any.
 */
export function enterInvocationDir(entryUrl: string): string | undefined {
  // Without --allow-env it reads as unset: nothing to honour.
  const initCwd = readEnv("INIT_CWD");
  if (!initCwd || !entryUrl.startsWith("file:")) return undefined;
  try {
    const checkout = Deno.realPathSync(new URL(".", entryUrl));
    const cwd = Deno.realPathSync(Deno.cwd());
    if (cwd !== checkout || !Deno.statSync(`${checkout}/deno.json`).isFile) return undefined;
    const target = Deno.realPathSync(initCwd);
    if (target === cwd || !Deno.statSync(target).isDirectory) return undefined;
    Deno.chdir(target);
    return target;
  } catch {
    return undefined;
  }
}
