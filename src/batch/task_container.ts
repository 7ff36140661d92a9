/**
 * A batch task in a container: the batch starts the container of the task's image (its tools'
 * runtime bound read-only, its lifeline held by this process), the task's `deft run` attaches to
 * it (`--docker-container-id`), the task's `test` runs in it with `exec`, and the batch removes
 * it at the end, whatever the end was. A batch that is SIGKILLed closes the lifeline, and the
 * container goes with it. Under a network list the container has no network but a proxy of its
 * own in the batch's process (task_network.ts): each refusal is shown on the batch's stderr, and
 * the task's decisions go into its trajectory when it ends.
 */
import {
  type Container,
  ContainerError,
  type ContainerRuntime,
  openContainer,
} from "../container/container.ts";
import { containerWorkplace } from "../agent/workplace.ts";
import { TOOL_HOST_COMMAND, workerEntry } from "../tools/host/mod.ts";
import {
  containerExecLaunch,
  containerImageRemoveLaunch,
  containerRemoveLaunch,
  groupLeader,
  type Launch,
  runChild,
} from "../policy/process.ts";
import type { BatchTask } from "./tasks.ts";
import type { NetworkList } from "../policy/network/rules.ts";
import type { TaskNetwork } from "./task_network.ts";

/** How a batch's containers are started (the config's `container` keys, the batch's flags). */
export interface TaskContainerSettings {
  /** `--container-runtime`; unset: docker when its daemon answers, else podman. */
  runtime?: ContainerRuntime;
  /** The container may use the host's network. */
  network: boolean;
  /**
   * The network list (`network:`): each task's container starts with `--network none`, this
   * process's proxy for the list bound in and its forwarder running, as a container session's
   * (src/container/network.ts); the task's `deft run` attaches and finds it so.
   */
  networkList?: NetworkList;
  memory?: string;
  pidsLimit?: number;
  podmanRuntime?: string;
  /** `--docker-keep`: the tasks' containers stay after their tasks (their ids are recorded). */
  keep?: boolean;
}

/** The label naming the batch (its output directory) on every container it starts. */
export const BATCH_LABEL = "deft.batch";
/** The label naming the task. */
export const TASK_LABEL = "deft.task";

/** How long the patch of a container whose run was cut short may take to compute. */
const PATCH_TIMEOUT_MS = 60_000;

/**
 * Starts the container of `task.image` (or of the image built from `task.dockerfile`) for a task
 * of the batch in `out`; its workspace is the task's `workdir` (checked to be a folder inside),
 * else the image's WORKDIR.
 */
export async function openTaskContainer(
  task: BatchTask,
  settings: TaskContainerSettings,
  out: string,
): Promise<TaskContainer> {
  if (task.dockerfile !== undefined) await checkDockerfileUnmoved(task.dockerfile);
  // The proxy's code loads only for a batch with a list; the task's proxy is its own, so its
  // decisions are known to be the task's (for its trajectory).
  const network = settings.networkList &&
    await (await import("./task_network.ts")).startTaskNetwork(settings.networkList);
  try {
    const container = await openTaskContainerWith(task, settings, out, network?.socketPath);
    return network ? { ...container, network } : container;
  } catch (e) {
    await network?.close();
    throw e;
  }
}

/** A task's container, and under a network list its own proxy (closed by the task's end). */
export type TaskContainer = Container & { network?: TaskNetwork };

async function openTaskContainerWith(
  task: BatchTask,
  settings: TaskContainerSettings,
  out: string,
  networkProxy: string | undefined,
): Promise<Container> {
  const container = await openContainer(
    {
      runtime: settings.runtime,
      image: task.image,
      dockerfile: task.dockerfile,
      network: settings.network,
      networkProxy,
      memory: settings.memory,
      pidsLimit: settings.pidsLimit,
      podmanRuntime: settings.podmanRuntime,
      keep: settings.keep,
      labels: { [BATCH_LABEL]: out, [TASK_LABEL]: task.id },
    },
    workerEntry(),
    TOOL_HOST_COMMAND,
  );
  if (task.workdir === undefined) return container;
  // Not `-w` as `deft run` reads it: a task's workdir is inside the image, never a host folder.
  const found = await runChild(
    containerExecLaunch(container.cli, container.id, { argv: ["test", "-d", task.workdir] }),
    { signal: AbortSignal.timeout(30_000) },
  ).catch(() => undefined);
  if (!found?.success) {
    await container.close().catch(() => {});
    // A kept container (and the image built for it) is not the task's to keep when the task
    // could not start in it.
    if (container.kept) {
      await removeKept(container);
      if (container.madeImage) await removeImage(container, container.madeImage.ref);
    }
    throw new ContainerError(
      `the task's workdir ${task.workdir} is not a folder in the image '${
        task.image ?? `built from ${task.dockerfile}`
      }': name ` +
        "the folder that holds the repository there, or leave workdir out to use the image's " +
        "WORKDIR.",
    );
  }
  return { ...container, workspace: task.workdir };
}

/**
 * The task file was checked when it was read (tasks.ts `lineDockerfile`), and the real path it
 * found is what is built; a folder on the way that has since become a symbolic link (or a file
 * that is gone) would make another folder the build context, so the build is refused.
 */
async function checkDockerfileUnmoved(dockerfile: string): Promise<void> {
  const real = await Deno.realPath(dockerfile).catch(() => undefined);
  if (real === dockerfile) return;
  throw new ContainerError(
    `the task's Dockerfile ${dockerfile} ${
      real === undefined ? "is gone" : `now leads to ${real}`
    } since the task file was read: refused, as its folder is the build context, whose files ` +
      "reach the model. Put the Dockerfile back as a plain file inside the task file's folder.",
  );
}

/** Removes an image built for a kept container whose task could not start. */
async function removeImage(container: Container, ref: string): Promise<void> {
  await runChild(containerImageRemoveLaunch(container.cli, [ref]), {
    signal: AbortSignal.timeout(30_000),
  }).catch(() => {});
}

/** Removes a kept container (one whose task could not use it). */
async function removeKept(container: Container): Promise<void> {
  await runChild(containerRemoveLaunch(container.cli, [container.id]), {
    signal: AbortSignal.timeout(30_000),
  }).catch(() => {});
}

/** The flags that make a task's `deft run` use `container`. */
export function attachArgs(container: Container): string[] {
  return [
    "-w",
    container.workspace,
    "--docker-container-id",
    container.id,
    "--container-runtime",
    container.cli.program,
  ];
}

/**
 * The task's `test` inside `container`, in its workspace: bash runs it there (the command is one
 * argument of `exec`, never read by a shell on the host), with the image's environment and none
 * of Deft's. The leader of its own process group, so a time limit can end it.
 */
export function containerTestLaunch(container: Container, command: string): Launch {
  const exec = containerExecLaunch(container.cli, container.id, {
    argv: ["bash", "--noprofile", "--norc", "-c", command],
    workdir: container.workspace,
  });
  return groupLeader([exec.program, ...exec.args], undefined, exec.env);
}

/**
 * The workspace's patch, computed inside (for a run that ended before writing its own); undefined
 * when it cannot be had (the container is gone, git failed or took too long). Never `""` for a
 * failure: an empty patch says the run changed nothing.
 */
export async function containerFallbackPatch(container: Container): Promise<string | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) =>
    timer = setTimeout(() => resolve(undefined), PATCH_TIMEOUT_MS)
  );
  try {
    // "Not a repository" would read as "no patch" (""), and so would a container that is gone:
    // asked first, either is no patch at all. Each step inside stops at the same deadline.
    const workplace = containerWorkplace(container, { timeoutMs: PATCH_TIMEOUT_MS });
    const patch = async () => await workplace.isRepository() ? await workplace.patch() : undefined;
    return await Promise.race([patch().catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
