/**
 * The child agents a run's `Task` calls ran (src/agent/subagent.ts): each call's recorded result
 * names its child's trajectory (`subagent`), which is read so the page shows the child's steps
 * nested in the call. A trajectory is data from disk, so the path it names is followed only to a
 * `trajectory_*.json` file in the folder Deft writes children to (its trajectories folder) or
 * beside the parent's own file; never deeper than a few levels, never twice.
 */
import { basename, dirname, resolve } from "node:path";
import { trajectoriesDir } from "../trajectory/recorder.ts";
import { loadRun, type RunModel } from "./model.ts";

/** Levels of children read below the run named on the command line. */
const MAX_DEPTH = 3;
/** Children read, at most, in all. */
const MAX_CHILDREN = 100;

/** Reads the children of `run` (and theirs) into `run.children`. */
export async function loadChildren(run: RunModel): Promise<void> {
  const seen = new Set([resolve(run.path)]);
  const below = async (parent: RunModel, depth: number): Promise<void> => {
    if (depth >= MAX_DEPTH) return;
    for (const trajectory of childLinks(parent)) {
      const path = childPath(parent.path, trajectory);
      if (!path || seen.has(path) || seen.size > MAX_CHILDREN) continue;
      seen.add(path);
      const child = await loadRun(path, basename(path).replace(/^trajectory_|\.json$/g, ""));
      (parent.children ??= new Map()).set(trajectory, child);
      await below(child, depth + 1);
    }
  };
  await below(run, 0);
}

/** The trajectory paths a run's recorded tool results name as their child's. */
export function childLinks(run: RunModel): string[] {
  const steps = run.trajectory?.agent_steps;
  if (!Array.isArray(steps)) return [];
  return steps.flatMap((step) =>
    (Array.isArray(step?.tool_results) ? step.tool_results : []).flatMap((r) => {
      const link = r?.subagent?.trajectory;
      return typeof link === "string" ? [link] : [];
    })
  );
}

/** Where a child's trajectory may be read from: a trajectory file where Deft writes them. */
function childPath(parentFile: string, named: string): string | undefined {
  const full = resolve(dirname(resolve(parentFile)), named);
  if (!/^trajectory_[\w.-]+\.json$/.test(basename(full))) return undefined;
  const places = [trajectoriesDir(), dirname(resolve(parentFile))].map((d) => resolve(d));
  return places.includes(dirname(full)) ? full : undefined;
}
