/** What the user asks of a container (the flags and the config's keys), and what Deft hands back. */
import { checkContainerWord, type ContainerCli } from "../policy/container_cli.ts";
import type { DeftInside } from "./inside.ts";
import { CONTAINER_RUNTIMES, ContainerError, type ContainerRuntime } from "./runtime.ts";

/** What the user asked for. */
export interface ContainerOptions {
  /** `--container-runtime`; unset: docker when its daemon answers, else podman. */
  runtime?: ContainerRuntime;
  /** `--docker-image`: start a container from it. */
  image?: string;
  /** `--docker-container-id`: use this running container; it is never removed. */
  containerId?: string;
  /** `--dockerfile-path`: build an image from this Dockerfile (its folder is the context). */
  dockerfile?: string;
  /** `--docker-image-file`: load the image from this archive (`docker save`). */
  imageFile?: string;
  /** `--docker-keep`: leave the started container behind. */
  keep?: boolean;
  /** `-w` as given: a folder inside, or a host folder bound at the same path. */
  workingDir?: string;
  /** The container may use the host's network. */
  network?: boolean;
  /**
   * The network list's proxy socket (a host path, policy/network): the container gets no network
   * but this socket and a forwarder to it (network.ts). Only for a container Deft starts.
   */
  networkProxy?: string;
  memory?: string;
  pidsLimit?: number;
  /** Podman's OCI runtime (default runc when installed). */
  podmanRuntime?: string;
  /** Told what takes a while (a build, a load) before it starts. */
  note?: (text: string) => void;
  /** More labels for a container Deft starts (a batch's own); Deft's labels win. */
  labels?: Record<string, string>;
}

/** A container Deft's tools run in. */
export interface Container {
  cli: ContainerCli;
  /** The container's name or id, as the runtime takes it. */
  id: string;
  image?: string;
  /** The image Deft built or loaded for it, removed with it unless kept. */
  madeImage?: { ref: string; removed: boolean };
  /** The workspace inside, an absolute path. */
  workspace: string;
  /** Deft started it (else it was named with --docker-container-id). */
  started: boolean;
  kept: boolean;
  /** How Deft's tool host starts inside. */
  inside: DeftInside;
  /** A forwarder to the network list's proxy listens inside (its shells get the variables). */
  proxied?: boolean;
  /**
   * The tool host Deft started inside while the container started (`inside.argv` over `exec -i`,
   * in the workspace, its boot message `INSIDE_BOOT` already written), handed out once; undefined
   * after that, or when there is none or it has already ended. Its taker owns it.
   */
  takeHost?(): Deno.ChildProcess | undefined;
  /** Removes the container unless it is kept or was not Deft's; safe to call twice. */
  close(): Promise<void>;
}

/** Throws a ContainerError unless `opts` name exactly one way to get a container. */
export function checkContainerOptions(opts: ContainerOptions): void {
  const sources = [
    ["--docker-image", opts.image],
    ["--docker-container-id", opts.containerId],
    ["--dockerfile-path", opts.dockerfile],
    ["--docker-image-file", opts.imageFile],
  ].filter(([, given]) => given !== undefined).map(([flag]) => flag);
  if (sources.length > 1) {
    throw new ContainerError(
      `${sources.join(" and ")} cannot go together: give one of --docker-image (start a new ` +
        "container from an image), --dockerfile-path (build one, then start it), " +
        "--docker-image-file (load one, then start it) or --docker-container-id (use a running " +
        "container).",
    );
  }
  for (
    const [flag, given] of [["--dockerfile-path", opts.dockerfile], [
      "--docker-image-file",
      opts.imageFile,
    ]] as const
  ) {
    if (given === "") throw new ContainerError(`${flag} needs a file name.`);
  }
  if (opts.keep && opts.containerId) {
    throw new ContainerError(
      "--docker-keep keeps a container Deft starts; one named by --docker-container-id is " +
        "never removed anyway. Drop --docker-keep.",
    );
  }
  if (opts.networkProxy && opts.network) {
    throw new ContainerError(
      "container.allow_network: true gives the container the host's whole network, so the " +
        "network list (network:) would mean nothing there. Drop one of them.",
    );
  }
  if (opts.networkProxy && opts.containerId) {
    // Not this function's user's mistake: the caller gives an attached container no proxy.
    throw new ContainerError(
      "the network list's proxy is bound into a container Deft starts, not one named by " +
        "--docker-container-id, which keeps the network it was started with.",
    );
  }
  if (opts.runtime && !CONTAINER_RUNTIMES.includes(opts.runtime)) {
    throw new ContainerError(
      `--container-runtime must be docker or podman, not '${opts.runtime}'.`,
    );
  }
  for (
    const [what, word] of [["--docker-image", opts.image], [
      "--docker-container-id",
      opts.containerId,
    ]] as const
  ) {
    if (word === undefined) continue;
    try {
      checkContainerWord(what, word);
    } catch (e) {
      throw new ContainerError((e as Error).message);
    }
  }
}
