/**
 * The sandbox Deft uses when nobody chose one: `workspace-write` where bubblewrap starts here, else
 * `none` with a notice; a bwrap that started is remembered per machine so most starts probe nothing.
 */
import type { SandboxMode } from "./sandbox_modes.ts";
import { deftCacheDir } from "./dirs.ts";
import { bwrapArgs } from "./bwrap_args.ts";
import { findExecutable, succeeds } from "./executables.ts";
import { dirname, join } from "./paths.ts";

/** What runs when no sandbox was asked for, and why, when that is no sandbox at all. */
export interface DefaultSandbox {
  mode: SandboxMode;
  /** One line for stderr when the default had to fall back to `none`. */
  notice?: string;
}

/**
 * The sandbox to use when neither a flag, `DEFT_SANDBOX` nor a config file asked for one:
 * `workspace-write` where bubblewrap is installed and can start here, else `none` with a notice
 * saying what is unprotected and how to fix it. Checked once per process, and a bwrap that
 * started is remembered per machine (see `probeMemory`), so most starts run no probe at all.
 */
export function defaultSandbox(bwrapPath?: string): DefaultSandbox {
  const key = bwrapPath ?? "";
  const known = defaultCache.get(key);
  if (known) return known;
  const bwrap = findExecutable(bwrapPath ?? "bwrap");
  let chosen: DefaultSandbox;
  if (!bwrap) {
    chosen = { mode: "none", notice: unprotected("bubblewrap is not installed") };
  } else if (!startsHere(bwrap)) {
    chosen = { mode: "none", notice: unprotected(`bubblewrap (${bwrap}) cannot start here`) };
  } else {
    chosen = { mode: "workspace-write" };
  }
  defaultCache.set(key, chosen);
  return chosen;
}

const defaultCache = new Map<string, DefaultSandbox>();

/** True when `bwrap` can make the sandbox here: remembered, else probed (and then remembered). */
function startsHere(bwrap: string): boolean {
  const memory = probeMemory(bwrap);
  if (memory && rememberedWorking(memory)) return true;
  const works = succeeds(bwrap, probeArgs());
  if (works && memory) rememberWorking(memory);
  return works;
}

/**
 * Where a working bwrap is remembered, and under what key: what decides whether bwrap can make
 * its namespaces here, as far as Deft can see it without `--allow-all` (Deno reads /proc only
 * with that). The program itself (path, device, inode, size, change time: a new or upgraded
 * bwrap), the kernel's release and this boot (the boot time, from the uptime), the user, and the
 * machine or container Deft runs in (its host name, and the files Docker and Podman put in a
 * container). Undefined when any of it cannot be read (no `--allow-sys`): then bwrap is probed.
 *
 * Only "it works" is remembered, never "it does not", and that fails closed: if the answer went
 * stale anyway (user namespaces turned off by sysctl since, without a reboot), the first sandbox
 * Deft then starts fails with its own error saying bubblewrap cannot start, and nothing runs
 * unsandboxed. A file someone else wrote can only claim that bwrap works, which the first
 * sandboxed child checks for real. A bwrap that does not start is probed at every start.
 */
function probeMemory(bwrap: string): { file: string; key: string } | undefined {
  try {
    const program = Deno.statSync(bwrap);
    const booted = Math.round((Date.now() / 1000 - Deno.osUptime()) / 10);
    const parts = [
      bwrap,
      program.dev,
      program.ino,
      program.size,
      // Deno gives ctime in whole seconds: mtime (to the millisecond) catches a rewrite within one.
      program.ctime?.getTime(),
      program.mtime?.getTime(),
      Deno.osRelease(),
      booted,
      Deno.uid(),
      Deno.hostname(),
      ...CONTAINER_MARKS.map(exists),
    ];
    return { file: join(deftCacheDir(), "sandbox-probe.json"), key: JSON.stringify(parts) };
  } catch {
    return undefined;
  }
}

/** Files a container runtime puts in its containers. */
const CONTAINER_MARKS = ["/.dockerenv", "/run/.containerenv"];

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

function rememberedWorking(memory: { file: string; key: string }): boolean {
  try {
    const saved = JSON.parse(Deno.readTextFileSync(memory.file));
    return Array.isArray(saved?.working) && saved.working.includes(memory.key);
  } catch {
    return false;
  }
}

/** Adds `memory.key` to the file (the last few keys: a machine with two bwraps keeps both). */
function rememberWorking(memory: { file: string; key: string }): void {
  try {
    let working: string[] = [];
    try {
      const saved = JSON.parse(Deno.readTextFileSync(memory.file));
      if (Array.isArray(saved?.working)) {
        working = saved.working.filter((k: unknown) => typeof k === "string");
      }
    } catch {
      // None yet, or unreadable: start afresh.
    }
    working = [...working.filter((k) => k !== memory.key), memory.key].slice(-4);
    Deno.mkdirSync(dirname(memory.file), { recursive: true });
    const temp = `${memory.file}.${Deno.pid}.tmp`;
    Deno.writeTextFileSync(temp, JSON.stringify({ working }) + "\n");
    Deno.renameSync(temp, memory.file);
  } catch {
    // Deft may not write its cache: the probe simply runs again next time.
  }
}

/** The namespaces and mounts the sandbox uses (host sockets aside), around `true`. */
function probeArgs(): string[] {
  return [
    ...bwrapArgs({ mode: "read-only", workspace: "/", cwd: "/", hiddenDirs: [] }),
    "--",
    "true",
  ];
}

function unprotected(why: string): string {
  return `${why}, so the model's commands and file tools run unsandboxed: they can write ` +
    "anywhere you can and reach the network. Install bubblewrap (Debian/Ubuntu: " +
    "`apt-get install -y bubblewrap`), or pass --sandbox none to say this is intended.";
}
