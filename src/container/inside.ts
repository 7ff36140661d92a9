/**
 * How Deft's own code runs inside a container: nothing is installed in the image. The host's Deno
 * (or Deft's compiled executable) and Deft's code (the source tree or the one-file bundle) are
 * bound read-only under /opt/deft, and the tool host runs from there (`deft __tool-host`, the
 * same relay as in the sandbox). From source, the npm packages come from the host's Deno cache,
 * bound read-only too: the container has no network to fetch them.
 */
import { basename, join } from "node:path";
import { denoDir } from "../policy/dirs.ts";
import { codeLocation } from "../policy/permissions.ts";
import type { ContainerBind } from "../policy/container_cli.ts";
import { denoCacheLaunch, runChild } from "../policy/process.ts";

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
  // Nothing can be downloaded in there.
  "--cached-only",
];

/**
 * The tool worker's permissions inside: everything in the container but the network (Deno's
 * fence stays a second one; the runtime's `--network none` is the first).
 */
export const INSIDE_PERMISSIONS: Deno.PermissionOptionsObject = {
  read: true,
  write: true,
  run: true,
  env: true,
  sys: true,
  net: false,
  ffi: false,
  import: false,
};

/**
 * The first line the tool host inside reads (`deft __tool-host`'s boot message): the worker's
 * permissions. Sent as soon as the host starts, so its worker loads while Deft finishes the start.
 */
export const INSIDE_BOOT = { type: "boot" as const, permissions: INSIDE_PERMISSIONS };

/** The binds that show Deft inside, and the argv and variables that start its tool host. */
export interface DeftInside {
  binds: ContainerBind[];
  /** The argv of `deft __tool-host` inside. */
  argv: string[];
  /** Variables the tool host needs inside (Deno's cache). */
  env: Record<string, string>;
  /** The program whose start proves the image can run Deft (it needs glibc). */
  probe: string[];
  /** Deno or the compiled Deft inside, and the entry Deno runs there: the network forwarder's. */
  self: { exec: string; main: string };
  /**
   * From source: the host Deno and the entry whose npm packages must be in the bound cache
   * before the container starts (`prepareDeftInside`).
   */
  source?: { deno: string; main: string; config: string };
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
      self: { exec: self, main: self },
    };
  }
  const deno = `${INSIDE_ROOT}/deno`;
  const binds: ContainerBind[] = [{ host: exec, container: deno, readOnly: true }];
  const main = entry.startsWith("file:") ? decodeURIComponent(new URL(entry).pathname) : entry;
  const code = codeLocation(entry);
  let inner: string;
  let modules = "none";
  let source: DeftInside["source"];
  if (code && code !== main) {
    // The source tree: bound whole, the entry at its place in it.
    binds.push({ host: code, container: `${INSIDE_ROOT}/code`, readOnly: true });
    inner = `${INSIDE_ROOT}/code${main.slice(code.length)}`;
    // A tree whose node_modules Deno made (nodeModulesDir "auto") holds every package: use it as
    // it is (read-only: `manual` never writes there). Else the packages come from Deno's cache.
    modules = isDirectory(`${code}/node_modules`) ? "manual" : "none";
    // Else Deno's cache must hold them before the container starts (`prepareDeftInside`).
    if (modules === "none") source = { deno: exec, main, config: `${code}/deno.json` };
  } else {
    binds.push({ host: main, container: `${INSIDE_ROOT}/${basename(main)}`, readOnly: true });
    inner = `${INSIDE_ROOT}/${basename(main)}`;
  }
  return {
    binds,
    argv: [deno, "run", ...INSIDE_FLAGS, `--node-modules-dir=${modules}`, inner, hostCommand],
    env,
    probe: [deno, "--version"],
    self: { exec: deno, main: inner },
    source,
  };
}

/**
 * From source, fetches every npm package Deft's code may load (the tools load theirs lazily, the
 * host may never have needed them) into the host's Deno cache, and adds the cache's npm folder to
 * the binds. Quick once they are there. A host that cannot fetch goes on with what the cache has:
 * a tool that then needs a missing package says which.
 */
export async function prepareDeftInside(inside: DeftInside): Promise<void> {
  if (!inside.source) return;
  const { deno, main, config } = inside.source;
  await runChild(denoCacheLaunch(deno, main, config), {
    signal: AbortSignal.timeout(300_000),
  }).catch(() => undefined);
  const npm = npmCache();
  const target = `${INSIDE_ROOT}/deno-dir/npm`;
  if (npm && !inside.binds.some((b) => b.container === target)) {
    inside.binds.push({ host: npm, container: target, readOnly: true });
  }
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** The host Deno cache's npm folder, when there is one. */
function npmCache(): string | undefined {
  const cache = denoDir();
  if (!cache) return undefined;
  try {
    const npm = Deno.realPathSync(join(cache, "npm"));
    return Deno.statSync(npm).isDirectory ? npm : undefined;
  } catch {
    return undefined;
  }
}
