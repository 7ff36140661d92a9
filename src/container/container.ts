/**
 * Deft's tools inside a Docker or Podman container. This module chooses the runtime, starts a
 * container from an image (or attaches to a running one), checks that Deft can run in it, and
 * removes what it started. Every argv comes from the process policy's container views
 * (src/policy/container_cli.ts); nothing here builds a command line or quotes anything.
 *
 * A container Deft starts lives only as long as Deft: its one process reads a pipe whose other
 * end Deft holds, so when Deft exits or is killed (even SIGKILL) the process ends and `--rm`
 * removes the container. Each carries Deft's labels and a proof that this install made it
 * (ownership.ts), and the next start removes a proven leftover whose run is over (a daemon that
 * was down when Deft died). `--docker-keep` keeps the
 * container; one named by `--docker-container-id` is never removed.
 */
//
// The parts, by job: runtime.ts (the runtime and its client), options.ts (what is asked),
// images.ts (build, load), leftovers.ts (labels, the sweep), ownership.ts (the proof),
// checks.ts (the workspace, Deft's runtime inside), start.ts and attach.ts.
import { attachContainer } from "./attach.ts";
import { deftInside } from "./inside.ts";
import { checkContainerOptions, type Container, type ContainerOptions } from "./options.ts";
import { chooseRuntime, likelyRuntime } from "./runtime.ts";
import { startContainer } from "./start.ts";

export { type MadeImage, makeImage } from "./images.ts";
export { DEFT_LABEL, sweepImages, sweepLeftovers } from "./leftovers.ts";
export { checkContainerOptions, type Container, type ContainerOptions } from "./options.ts";
export {
  chooseRuntime,
  CONTAINER_RUNTIMES,
  ContainerError,
  type ContainerRuntime,
  ContainerRuntimeUnavailableError,
} from "./runtime.ts";

/**
 * Starts (or attaches to) the container for a session's tools, and checks Deft can run in it.
 * `entry` is the module the tool worker runs; `hostCommand` the argument that makes Deft serve
 * as the tool host. Throws ContainerError with what went wrong and what to do.
 */
export async function openContainer(
  opts: ContainerOptions,
  entry: string,
  hostCommand: string,
): Promise<Container> {
  checkContainerOptions(opts);
  const inside = deftInside(entry, hostCommand);
  const choose = () => chooseRuntime(opts.runtime, opts.podmanRuntime);
  if (opts.containerId) return await attachContainer(await choose(), opts, inside);
  const likely = likelyRuntime(opts.runtime, opts.podmanRuntime);
  return await startContainer(choose, likely, opts, inside);
}
