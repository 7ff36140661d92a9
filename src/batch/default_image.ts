/**
 * A batch's default image: the image of every task line that names none. `--docker-image` names
 * it; `--dockerfile-path` builds it and `--docker-image-file` loads it, once, when the batch (or
 * an array task, on its node) starts, and the batch removes what it made when it ends, also after
 * Ctrl-C or SIGTERM, unless `--docker-keep`. A batch that is SIGKILLed leaves its build behind,
 * labelled: the next Deft that starts a container sweeps it.
 */
import { checkContainerOptions, ContainerError, makeImage } from "../container/container.ts";
import { loadConfig } from "../config/load.ts";
import type { BatchSettings } from "./orchestrate.ts";

/** Throws a ContainerError (exit code 2) for container flags a batch cannot take together. */
export function checkBatchContainerFlags(settings: BatchSettings): void {
  if (settings.dockerContainerId !== undefined) {
    throw new ContainerError(
      "--docker-container-id does not apply to deft batch: a batch starts one container per " +
        "task. Name the image instead (--docker-image, --dockerfile-path or --docker-image-file).",
    );
  }
  checkContainerOptions({
    image: settings.dockerImage,
    dockerfile: settings.dockerfilePath,
    imageFile: settings.dockerImageFile,
    runtime: settings.containerRuntime,
  });
}

/** True when the batch names a default image in any of the three ways. */
export function hasDefaultImage(settings: BatchSettings): boolean {
  return settings.dockerImage !== undefined || settings.dockerfilePath !== undefined ||
    settings.dockerImageFile !== undefined;
}

/** The default image, ready; `remove` takes away what was made for the batch. */
export interface DefaultImage {
  /** The image's name; undefined when the batch names none. */
  image?: string;
  /** The runtime that made it: the tasks' containers must use the same. */
  runtime?: "docker" | "podman";
  remove(): Promise<void>;
}

/**
 * Names, builds or loads the batch's default image (the config's container keys apply to a
 * build: its network, podman's OCI runtime). `note` hears what takes a while.
 */
export async function prepareDefaultImage(
  settings: BatchSettings,
  note: (line: string) => void,
): Promise<DefaultImage> {
  const none = { remove: () => Promise.resolve() };
  if (settings.dockerImage !== undefined) return { ...none, image: settings.dockerImage };
  if (settings.dockerfilePath === undefined && settings.dockerImageFile === undefined) return none;
  const { config } = await loadConfig(settings.configFile);
  const made = await makeImage({
    runtime: settings.containerRuntime ?? config.container.runtime,
    dockerfile: settings.dockerfilePath,
    imageFile: settings.dockerImageFile,
    keep: settings.dockerKeep,
    network: config.container.allow_network,
    podmanRuntime: config.container.podman_runtime,
    note: (text) => note(`deft batch: ${text}`),
  });
  note(
    `deft batch: the default image is ${made.ref}` +
      (made.owned ? " (removed when the batch ends)" : ""),
  );
  return {
    image: made.ref,
    runtime: made.cli.program,
    remove: made.remove,
  };
}
