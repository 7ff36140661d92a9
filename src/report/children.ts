/**
 * The child agents a run's `Task` calls ran (src/agent/subagent.ts): each call's recorded result
 * names its child's trajectory (`subagent`), which is read so the page shows the child's steps
 * nested in the call. A trajectory is data from disk, and a report is often shared: a hostile file
 * may name the user's other sessions to pull them into the page. So a named child is shown only
 * when it is a `trajectory_*.json` file beside the parent's own file or in Deft's trajectories
 * folder (where Deft writes children), and it names the parent back: its recorded `parent` is this
 * run's session, and, when it is not beside the parent's file, this very file. Never deeper than
 * a few levels, never twice; a child not shown is said so, and why.
 */
import { basename, dirname, resolve } from "node:path";
import { trajectoriesDir } from "../trajectory/recorder.ts";
import { loadRun, type RunModel } from "./model.ts";

/** Levels of children read below the run named on the command line. */
const MAX_DEPTH = 3;
/** Children read, at most, in all. */
const MAX_CHILDREN = 100;

/** Reads the children of `run` (and theirs) into `run.children`; for one refused, why. */
export async function loadChildren(run: RunModel): Promise<void> {
  // Each file read once: a file may name one child from any number of calls, at every level.
  const loaded = new Map<string, RunModel>([[resolve(run.path), run]]);
  // Those whose own children are read (once, below the first parent that shows them).
  const expanded = new Set([run]);
  const below = async (parent: RunModel, depth: number): Promise<void> => {
    if (depth >= MAX_DEPTH) return;
    for (const trajectory of childLinks(parent)) {
      const place = childPlace(parent.path, trajectory);
      if (!place) {
        refuse(
          parent,
          trajectory,
          "its trajectory is not beside this one nor in Deft's trajectories folder",
        );
        continue;
      }
      let child = loaded.get(place.path);
      if (!child) {
        if (loaded.size > MAX_CHILDREN) continue;
        child = await loadRun(
          place.path,
          basename(place.path).replace(/^trajectory_|\.json$/g, ""),
        );
        loaded.set(place.path, child);
      }
      if (child === run || (child.trajectory && !namesParent(child, parent, place.beside))) {
        refuse(parent, trajectory, "its trajectory does not name this session as its parent");
        continue;
      }
      (parent.children ??= new Map()).set(trajectory, child);
      if (expanded.has(child)) continue;
      expanded.add(child);
      await below(child, depth + 1);
    }
  };
  await below(run, 0);
}

function refuse(parent: RunModel, trajectory: string, why: string): void {
  (parent.children ??= new Map()).set(trajectory, `not shown: ${why}`);
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

/**
 * Where a child's trajectory may be read from: a trajectory file where Deft writes them, and
 * whether that is beside the parent's own file.
 */
function childPlace(
  parentFile: string,
  named: string,
): { path: string; beside: boolean } | undefined {
  const folder = dirname(resolve(parentFile));
  const full = resolve(folder, named);
  if (!/^trajectory_[\w.-]+\.json$/.test(basename(full))) return undefined;
  if (dirname(full) === folder) return { path: full, beside: true };
  let sessions: string | undefined;
  try {
    sessions = resolve(trajectoriesDir());
  } catch { /* no state folder known, or refused: only files beside the parent's */ }
  return dirname(full) === sessions ? { path: full, beside: false } : undefined;
}

/**
 * Whether the child's recorded `parent` is this run: its session, and (for a child in Deft's
 * trajectories folder, where every session's children are) the parent's file itself, so that a
 * file elsewhere that copies a session's id still draws none of that session's children.
 */
function namesParent(child: RunModel, parent: RunModel, beside: boolean): boolean {
  const named = child.trajectory?.parent;
  const session = parent.trajectory?.session_id;
  if (!named || typeof session !== "string" || named.session_id !== session) return false;
  if (beside) return true;
  return typeof named.trajectory === "string" &&
    resolve(named.trajectory) === resolve(parent.path);
}
