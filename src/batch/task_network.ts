/**
 * The network of one batch task in a container, under a network list: the task's container gets
 * a proxy of its own (in the batch's process, for the batch's list), so each decision is known
 * to be this task's. The batch's stderr still shows each refusal (the decision listeners hear
 * it); when the task ends, its decisions go into its trajectory's `network` list, as a container
 * session's do (the task's `deft run` attaches to the container but its shell's connections reach
 * this process's proxy, not its own).
 */
import { type NetworkList, startNetworkProxy } from "../policy/network/mod.ts";
import { reportNetworkDecision } from "../policy/network/decisions.ts";
import { journalPath } from "../trajectory/journal.ts";
import { type NetworkRecord, readTrajectory } from "../trajectory/recorder.ts";

/** Most decisions kept for one task's trajectory (as a session keeps). */
const MAX_RECORDED = 2000;

/** A task's own proxy and what it decided. */
export interface TaskNetwork {
  /** The proxy's Unix socket, bound into the task's container. */
  socketPath: string;
  /** Each destination decided, in order (host and port only). */
  records: NetworkRecord[];
  /** Stops the proxy (its connections cut, its folder removed); safe to call twice. */
  close(): Promise<void>;
}

/** Starts the proxy of one task for `list`. */
export async function startTaskNetwork(list: NetworkList): Promise<TaskNetwork> {
  const records: NetworkRecord[] = [];
  const proxy = await startNetworkProxy({
    list,
    onDecision: (d) => {
      if (records.length < MAX_RECORDED) {
        records.push({
          time: new Date().toISOString(),
          host: d.host,
          port: d.port,
          allowed: d.allowed,
          reason: d.reason,
        });
      }
      reportNetworkDecision(d);
    },
  });
  let closed: Promise<void> | undefined;
  return {
    socketPath: proxy.socketPath,
    records,
    close: () => closed ??= proxy.close().catch(() => {}),
  };
}

/**
 * Adds `records` to the trajectory at `path` (written by the task's `deft run`, which has ended):
 * its `network` list, in time order with any the run recorded itself. A run that left a journal
 * (it was killed) is folded into one whole document first. Nothing is written when there is no
 * trajectory (the run never started) or nothing to add; a trajectory that cannot be read is left
 * as it is, and the reason returned.
 */
export async function recordTaskNetwork(
  path: string,
  records: readonly NetworkRecord[],
): Promise<string | undefined> {
  if (records.length === 0) return undefined;
  let trajectory;
  try {
    trajectory = await readTrajectory(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    return `the task's network decisions were not added to ${path}: ${(e as Error).message}`;
  }
  const network = [...trajectory.network ?? [], ...records]
    .sort((a, b) => a.time.localeCompare(b.time))
    .slice(0, MAX_RECORDED);
  const whole: Record<string, unknown> = { ...trajectory, network };
  delete whole.journal_id;
  const text = JSON.stringify(whole, null, 2) + "\n";
  // Written beside it and renamed over it: a reader never sees half a document.
  const temp = `${path}.network-${crypto.randomUUID().slice(0, 8)}`;
  try {
    await Deno.writeTextFile(temp, text, { createNew: true });
    await Deno.rename(temp, path);
  } catch (e) {
    await Deno.remove(temp).catch(() => {});
    return `the task's network decisions were not added to ${path}: ${(e as Error).message}`;
  }
  // The journal is folded in now: left, a reader would fold it a second time.
  await Deno.remove(journalPath(path)).catch(() => {});
  return undefined;
}
