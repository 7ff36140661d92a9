/**
 * A miss (a name in no file) against `grep -rlw` for it, in rounds that interleave every command,
 * so a swing in the machine's load reaches all of them alike (issue 51, Deliver 3: a miss <= 1.5x
 * grep -rlw, cold and warm, also through `deft ckg` as a user starts it). Each round runs grep,
 * then for each Deft checkout measured (this one, and with `--against DIR` another, for a before
 * and after in the same run):
 * - a cold miss: `deft ckg search-function` on an empty cache;
 * - a warm miss: the same on the complete index;
 * - a warm miss through `deft tool ckg`, the tool as a one-off call starts it: the default
 *   sandbox (bubblewrap and a second Deno process hosting the tool).
 * Used by ckg_kernel_bench.ts (and on its own: `--misses-only`, see there).
 */
import { median, ms } from "./timing.ts";

/** The figures' target: a miss costs at most this many times `grep -rlw`. */
export const TARGET_MISS = 1.5;

/** What one command cost. */
export interface Timed {
  wallMs: number;
  cpuMs: number;
}

/** A Deft checkout to measure, by the `main.ts` it runs. */
export interface Checkout {
  label: string;
  main: string;
}

/** How the bench runs one command (wall and CPU time of its process tree). */
export type Measure = (argv: string[], env?: Record<string, string>) => Promise<Timed>;

/**
 * Prints the miss figures for `root`, whose complete index lives under `indexCache` (Deft's
 * cache folder); fresh caches for cold misses are made under `work`.
 */
export async function missFigures(options: {
  root: string;
  name: string;
  indexCache: string;
  work: string;
  checkouts: Checkout[];
  rounds: number;
  denoFlags: string[];
  measure: Measure;
}): Promise<void> {
  const { root, name, indexCache, work, checkouts, rounds, denoFlags, measure } = options;
  const runs: Record<string, Timed[]> = {};
  const add = (key: string, value: Timed) => (runs[key] ??= []).push(value);
  const loads: string[] = [loadAverage()];
  let caches = 0;
  const search = ["ckg", "search-function", name, "-w", root, "--no-body"];
  const tool = [
    "tool",
    "ckg",
    JSON.stringify({ command: "search_function", path: root, identifier: name, print_body: false }),
    "-w",
    root,
  ];
  for (let round = 0; round < rounds; round++) {
    add("grep", await measure(["grep", "-rlw", name, root]));
    for (const { label, main } of checkouts) {
      const deft = (args: string[], cache: string) =>
        measure([Deno.execPath(), "run", ...denoFlags, main, ...args], { DEFT_CACHE_DIR: cache });
      const cold = `${work}/miss-cache-${caches++}`;
      add(`${label} cold`, await deft(search, cold));
      await Deno.remove(cold, { recursive: true }).catch(() => {});
      add(`${label} warm`, await deft(search, indexCache));
      add(`${label} tool`, await deft(tool, indexCache));
    }
    if (round === Math.floor(rounds / 2)) loads.push(loadAverage());
  }
  loads.push(loadAverage());
  const wall = (key: string) => median(runs[key].map((r) => r.wallMs));
  const cpu = (key: string) => median(runs[key].map((r) => r.cpuMs));
  const grep = wall("grep");
  console.log(
    `ckg-kernel: misses (${name}), ${rounds} interleaved rounds, medians; load ` +
      `${loads.join(" → ")}: grep -rlw ${ms(grep)} (CPU ${ms(cpu("grep"))})`,
  );
  for (const { label } of checkouts) {
    const figure = (key: string, what: string, target: boolean) => {
      const ratio = wall(key) / grep;
      const verdict = target
        ? ` (target <= ${TARGET_MISS}x)${ratio <= TARGET_MISS ? "" : " MISSED"}`
        : "";
      return `${what} ${ms(wall(key))} = ${ratio.toFixed(2)}x grep${verdict}, CPU ` +
        `${ms(cpu(key))}`;
    };
    console.log(
      `ckg-kernel: ${label}: ${figure(`${label} cold`, "cold miss (deft ckg)", true)}; ` +
        `${figure(`${label} warm`, "warm miss (deft ckg)", true)}; ` +
        `${figure(`${label} tool`, "warm miss (deft tool ckg, default sandbox)", true)}`,
    );
  }
}

function loadAverage(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
  } catch {
    return "unknown";
  }
}
