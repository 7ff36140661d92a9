/**
 * How Deft's own code runs inside a container: nothing is installed in the image. The host's Deno
 * (or Deft's compiled executable) and Deft's code (the source tree or the one-file bundle) are
 * bound read-only under /opt/deft, and the tool host runs from there (`deft __tool-host`, the
 * same relay as in the sandbox). From source, the npm packages come from the host's Deno cache,
 * bound read-only too: the container has no network to fetch them.
 */
import { basename, join } from "node:path";
import { readEnv } from "../env.ts";
import { codeLocation } from "../policy/permissions.ts";
import type { ContainerBind } from "../policy/process.ts";

/** Where Deft's files appear inside. */
export const INSIDE_ROOT = "/opt/deft";
/** Deft's private folder inside: the temp files and the code graph. */
export const INSIDE_TEMP = "/tmp/deft";

/** Deno's flags for the tool host inside: everything but the network, offline. */
const INSIDE_FLAGS = [
  "--unstable-raw-imports",
  "--unstable-worker-options",
  "--unstable-lazy-dynamic-imports",
  "--no-prompt",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
  "--allow-sys",
  // Nothing can be downloaded in there; the packages come from the bound cache.
  "--cached-only",
  // The code is read-only: Deno must not try to make a node_modules folder beside it.
  "--node-modules-dir=none",
];

/** The binds that show Deft inside, and the argv and variables that start its tool host. */
export interface DeftInside {
  binds: ContainerBind[];
  /** The argv of `deft __tool-host` inside. */
  argv: string[];
  /** Variables the tool host needs inside (Deno's cache). */
  env: Record<string, string>;
  /** The program whose start proves the image can run Deft (it needs glibc). */
  probe: string[];
}

/** Deft as this process runs it (`entry`: the module the worker runs), shown inside. */
export function deftInside(entry: string, hostCommand: string): DeftInside {
  const exec = Deno.execPath();
  const env = { DENO_DIR: `${INSIDE_ROOT}/deno-dir`, NO_COLOR: "1" };
  if (!/^deno(\.exe)?$/i.test(basename(exec))) {
    // A compiled Deft: the executable is Deno and the code at once.
    const self = `${INSIDE_ROOT}/deft`;
    return {
      binds: [{ host: exec, container: self, readOnly: true }],
      argv: [self, hostCommand],
      env,
      probe: [self, "--version"],
    };
  }
  const deno = `${INSIDE_ROOT}/deno`;
  const binds: ContainerBind[] = [{ host: exec, container: deno, readOnly: true }];
  const main = entry.startsWith("file:") ? decodeURIComponent(new URL(entry).pathname) : entry;
  const code = codeLocation(entry);
  let inner: string;
  if (code && code !== main) {
    // The source tree: bound whole, the entry at its place in it.
    binds.push({ host: code, container: `${INSIDE_ROOT}/code`, readOnly: true });
    inner = `${INSIDE_ROOT}/code${main.slice(code.length)}`;
    const npm = npmCache();
    if (npm) binds.push({ host: npm, container: `${INSIDE_ROOT}/deno-dir/npm`, readOnly: true });
  } else {
    binds.push({ host: main, container: `${INSIDE_ROOT}/${basename(main)}`, readOnly: true });
    inner = `${INSIDE_ROOT}/${basename(main)}`;
  }
  return {
    binds,
    argv: [deno, "run", ...INSIDE_FLAGS, inner, hostCommand],
    env,
    probe: [deno, "--version"],
  };
}

/** The host Deno cache's npm folder, when there is one. */
function npmCache(): string | undefined {
  const home = readEnv("HOME");
  const denoDir = readEnv("DENO_DIR") ??
    (readEnv("XDG_CACHE_HOME") ? join(readEnv("XDG_CACHE_HOME")!, "deno") : undefined) ??
    (home ? join(home, ".cache", "deno") : undefined);
  if (!denoDir) return undefined;
  try {
    const npm = Deno.realPathSync(join(denoDir, "npm"));
    return Deno.statSync(npm).isDirectory ? npm : undefined;
  } catch {
    return undefined;
  }
}
