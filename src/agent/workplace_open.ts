/**
 * Choosing a session's workplace from the flags, once: a host folder, or a container
 * (src/container) started (or attached to) before the session is assembled, said on the console.
 */
import type { AgentConsole } from "./console.ts";
import type { Container, ContainerRuntime } from "../container/container.ts";
import type { DeftConfig } from "../config/load.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { workerEntry } from "../tools/host/mod.ts";
import { UsageError } from "../errors.ts";
import { hostWorkplace } from "./workplace_host.ts";
import { containerWorkplace } from "./workplace_container.ts";
import type { Workplace } from "./workplace_types.ts";

/** The container flags (src/container): the tools run inside when an image or id is given. */
export interface WorkplaceOptions {
  dockerImage?: string;
  dockerContainerId?: string;
  /** `--dockerfile-path`: build the image, then start it. */
  dockerfilePath?: string;
  /** `--docker-image-file`: load the image (`docker save`'s archive), then start it. */
  dockerImageFile?: string;
  dockerKeep?: boolean;
  containerRuntime?: string;
  /** `-w` as given: with a container, a folder inside (or a host folder bound there). */
  workingDir?: string;
}

/** True when the flags ask for a container; the workspace is then the container's. */
export function wantsContainer(opts: WorkplaceOptions): boolean {
  return opts.dockerImage !== undefined || opts.dockerContainerId !== undefined ||
    opts.dockerfilePath !== undefined || opts.dockerImageFile !== undefined;
}

/**
 * The session's workplace: the container the flags ask for, started (or attached to) and said
 * on the console; else the host folder `workspace` (its real path).
 */
export async function openWorkplace(
  opts: WorkplaceOptions,
  config: DeftConfig,
  console: AgentConsole,
  workspace: string,
): Promise<Workplace> {
  if (!wantsContainer(opts)) return hostWorkplace(workspace);
  const attaching = opts.dockerContainerId !== undefined;
  const proxy = attaching ? undefined : await networkProxy(config);
  const container = await startContainer(opts, config.container, console, proxy);
  if (attaching && config.network && !config.allow_network && !container.proxied) {
    // The user's own running container: Deft cannot change its network, so the list does not
    // apply there, and the user is told. (A batch's task container was started under the list.)
    console.note(
      "network: the network list (network:) is not applied in a container named by " +
        "--docker-container-id: it keeps the network it was started with. A container Deft " +
        "starts (--docker-image) gets the list.",
    );
  }
  return containerWorkplace(container);
}

/**
 * With a network list, the socket of this process's proxy for it: a container Deft starts gets
 * it bound in, behind `--network none` (src/container/network.ts). Loaded only then.
 */
async function networkProxy(config: DeftConfig): Promise<string | undefined> {
  if (!config.network || config.allow_network) return undefined;
  const { ensureNetworkProxy } = await import("../policy/network/mod.ts");
  return (await ensureNetworkProxy(config.network)).socketPath;
}

/** Starts (or attaches to) the session's container and says so. */
async function startContainer(
  opts: WorkplaceOptions,
  config: DeftConfig["container"],
  console: AgentConsole,
  networkProxy: string | undefined,
): Promise<Container> {
  if (opts.containerRuntime !== undefined && !isContainerRuntime(opts.containerRuntime)) {
    throw new UsageError(
      `--container-runtime must be docker or podman, not '${opts.containerRuntime}'.`,
    );
  }
  const [{ openContainer }, { TOOL_HOST_COMMAND }] = await Promise.all([
    import("../container/container.ts"),
    import("../tools/host/mod.ts"),
  ]);
  const container = await openContainer(
    {
      runtime: (opts.containerRuntime as ContainerRuntime | undefined) ?? config.runtime,
      image: opts.dockerImage,
      containerId: opts.dockerContainerId,
      dockerfile: opts.dockerfilePath,
      imageFile: opts.dockerImageFile,
      keep: opts.dockerKeep || config.keep,
      workingDir: opts.workingDir,
      network: config.allow_network,
      networkProxy,
      memory: config.memory,
      pidsLimit: config.pids_limit,
      podmanRuntime: config.podman_runtime,
      note: (text) => console.note(terminalText(text)),
    },
    workerEntry(),
    TOOL_HOST_COMMAND,
  );
  const what = container.started
    ? `started container ${container.id.slice(0, 12)} from ${container.image}`
    : `using container ${container.id}`;
  console.note(`${what} (${container.cli.program}); workspace ${container.workspace}`);
  if (container.started && container.kept) {
    console.note(
      `container kept: ${container.id} (remove it with ${container.cli.program} rm -f ` +
        `${container.id.slice(0, 12)})`,
    );
    if (container.madeImage) console.note(`image kept: ${container.madeImage.ref}`);
  }
  return container;
}

function isContainerRuntime(name: string): name is ContainerRuntime {
  return name === "docker" || name === "podman";
}
