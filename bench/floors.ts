/**
 * The floors of issue 51's decision: what a one-off sandboxed `deft tool` call cannot go below in
 * this design, measured in the same run as the call, interleaved with it (call, each part of its
 * floor, call, ...), each part a median. The floor is the sum of its parts' medians.
 *
 * A sandboxed one-off call starts Deft, runs the tool's worker, starts bubblewrap and starts Deno
 * again inside it. So its floor is the same call with `--sandbox none` (Deft's start and its
 * worker), plus bubblewrap running `true` with the very argv and environment Deft's sandboxed host
 * gets (`sandboxedHostLaunch`, from src/policy's `toolHostLaunch`), plus a Deno hello-world with the
 * host's Deno flags and environment. A 20 MB `str_replace` adds Python reading and writing the file.
 */
import { drawBoundary, sessionTemp } from "../src/policy/boundary.ts";
import { type Launch, runChild } from "../src/policy/process.ts";
import type { ToolSettings } from "../src/tools/base.ts";
import { hostDirs, sandboxedHostParts } from "../src/tools/host/mod.ts";

const { hostDenoArgv, sandboxedHostLaunch } = await sandboxedHostParts();
import type { FigureId } from "./budgets.ts";
import { median, timeCommand } from "./timing.ts";

/** One part of a floor: what it is and its median. */
export interface FloorPart {
  name: string;
  median: number;
}

/** A figure measured against a floor: the subject's median, the floor (sum of parts), the ratio. */
export interface FloorFigure {
  id: FigureId;
  subject: number;
  baseline: number;
  ratio: number;
  runs: number;
  parts: FloorPart[];
}

/** What a bench folder holds that the floors need (see figures.ts `openBench`). */
export interface FloorBench {
  tmp: string;
  ws: string;
  hello: string;
  deft(...args: string[]): string[];
}

const MAIN = new URL("../main.ts", import.meta.url).href;

/**
 * Times `subject` and each part of its floor in turn, `runs` rounds after one warm-up round; the
 * floor is the sum of the parts' medians.
 */
export async function againstFloor(
  id: FigureId,
  runs: number,
  subject: () => Promise<number>,
  parts: Record<string, () => Promise<number>>,
): Promise<FloorFigure> {
  const entries = Object.entries(parts);
  await subject();
  for (const [, part] of entries) await part();
  const times: number[] = [];
  const partTimes = entries.map(() => [] as number[]);
  for (let i = 0; i < runs; i++) {
    times.push(await subject());
    for (const [k, [, part]] of entries.entries()) partTimes[k].push(await part());
  }
  const measured = entries.map(([name], k) => ({ name, median: median(partTimes[k]) }));
  const floor = measured.reduce((sum, p) => sum + p.median, 0);
  const s = median(times);
  return { id, subject: s, baseline: floor, ratio: s / floor, runs, parts: measured };
}

/**
 * The parts of a sandboxed one-off call's floor beyond the unsandboxed call: bubblewrap running
 * `true` as Deft's editors' host is started (same argv, environment and folder), and a Deno
 * hello-world with that host's flags and environment. `close` removes the host's temp folder.
 */
export function sandboxFloor(bench: FloorBench): {
  parts: Record<string, () => Promise<number>>;
  close(): void;
} {
  const settings: ToolSettings = { sandbox: "workspace-write" };
  const dirs = hostDirs(settings);
  const temp = sessionTemp(dirs);
  const boundary = drawBoundary(
    { provider: "anthropic", workspace: bench.ws, settings },
    dirs,
    MAIN,
    temp,
  );
  const bwrap = sandboxedHostLaunch(settings, "sandboxed", boundary, MAIN, ["true"]);
  const [program, ...args] = hostDenoArgv(boundary, new URL(`file://${bench.hello}`).href);
  const hello: Launch = { program, args, env: bwrap.env, cwd: bench.ws };
  return {
    parts: {
      "bwrap … true (the host's argv)": () => timeLaunch(bwrap),
      "Deno hello-world (the host's flags)": () => timeLaunch(hello),
    },
    close: () => temp?.remove(),
  };
}

/** Wall time of one run of `launch`, in ms; throws when it fails. */
export async function timeLaunch(launch: Launch): Promise<number> {
  const start = performance.now();
  const out = await runChild(launch, { stdout: "null", stderr: "piped" });
  const elapsed = performance.now() - start;
  if (!out.success) {
    throw new Error(
      `${launch.program} ${launch.args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return elapsed;
}

const deno = Deno.execPath();

/**
 * One `deft tool … view` with the default sandbox, against its floor: the same call with
 * `--sandbox none`, plus bubblewrap's `true` and a Deno hello-world as Deft's host starts them.
 */
export async function sandboxedView(bench: FloorBench, runs: number): Promise<FloorFigure> {
  const file = `${bench.ws}/a.txt`;
  await Deno.writeTextFile(file, "one\ntwo\n");
  const view = JSON.stringify({ command: "view", path: file });
  const call = (...sandbox: string[]) => () =>
    timeCommand(
      deno,
      bench.deft("tool", ...sandbox, "str_replace_based_edit_tool", view, "-w", bench.ws),
      bench.ws,
    );
  const floor = sandboxFloor(bench);
  try {
    return await againstFloor("sandboxed_view", runs, call("--sandbox", "workspace-write"), {
      "the view with --sandbox none": call("--sandbox", "none"),
      ...floor.parts,
    });
  } finally {
    floor.close();
  }
}

/**
 * A `str_replace` on a 20 MB file through `deft tool` (default sandbox), against Python reading
 * and writing the same file (start to exit) plus the floor of a sandboxed one-off call (a view
 * with `--sandbox none`, bubblewrap's `true`, a Deno hello-world). The editor's size limit is
 * raised through a user config file, for the subject and the unsandboxed view alike.
 */
export async function deftToolStrReplace(
  bench: FloorBench,
  runs: number,
  bigFile: (dir: string) => Promise<{ path: string }>,
  flip: () => { old_str: string; new_str: string },
  python: (path: string) => () => Promise<number>,
): Promise<FloorFigure> {
  const { path } = await bigFile(bench.ws);
  const small = `${bench.ws}/a.txt`;
  await Deno.writeTextFile(small, "one\ntwo\n");
  const config = `${bench.tmp}/deft.yaml`;
  await Deno.writeTextFile(config, "tool_settings:\n  max_file_bytes: 100000000\n");
  const env = { DEFT_CONFIG: config };
  const tool = (args: Record<string, unknown>, ...sandbox: string[]) =>
    timeCommand(
      deno,
      bench.deft(
        "tool",
        ...sandbox,
        "str_replace_based_edit_tool",
        JSON.stringify(args),
        "-w",
        bench.ws,
      ),
      bench.ws,
      env,
    );
  const floor = sandboxFloor(bench);
  try {
    return await againstFloor(
      "str_replace_20mb_deft_tool",
      runs,
      () => tool({ command: "str_replace", path, ...flip() }),
      {
        "python3 reads and writes the file": python(path),
        "a view with --sandbox none": () =>
          tool({ command: "view", path: small }, "--sandbox", "none"),
        ...floor.parts,
      },
    );
  } finally {
    floor.close();
  }
}
