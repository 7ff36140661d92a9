/**
 * `--docker-container-id`: a running container, used as it is. It cannot be given binds, so Deft's
 * runtime must already be in it (a container a Deft started with `--docker-keep`); it is never
 * removed.
 */
import type { ContainerCli } from "../policy/container_cli.ts";
import { containerInspectLaunch } from "../policy/container_cli.ts";
import { prepareInside, workspacePlan } from "./checks.ts";
import type { DeftInside } from "./inside.ts";
import type { Container, ContainerOptions } from "./options.ts";
import { ContainerError, query } from "./runtime.ts";
import { forwarded } from "./network.ts";

/** Attaches to `opts.containerId` and checks Deft can run in it; a ContainerError if not. */
export async function attachContainer(
  cli: ContainerCli,
  opts: ContainerOptions,
  inside: DeftInside,
): Promise<Container> {
  const id = opts.containerId!;
  const answer = await query(containerInspectLaunch(cli, [id]));
  let info: {
    Id?: string;
    State?: { Running?: boolean };
    Config?: { WorkingDir?: string; Image?: string; Labels?: Record<string, string> | null };
  } = {};
  try {
    [info] = JSON.parse(answer.stdout);
  } catch {
    // Reported below.
  }
  if (!answer.ok || !info?.Id) {
    throw new ContainerError(
      `there is no container '${id}' in ${cli.program} (list them with \`${cli.program} ps\`).`,
    );
  }
  if (!info.State?.Running) {
    throw new ContainerError(
      `the container '${id}' is not running: start it with \`${cli.program} start ${id}\`.`,
    );
  }
  const { workspace } = workspacePlan(opts.workingDir, info.Config?.WorkingDir, true);
  // A running container cannot be given binds: Deft's runtime must already be inside it.
  await prepareInside(cli, id, undefined, inside, workspace);
  return {
    cli,
    id,
    // What it was started from (resuming finds the sessions of that image by it).
    image: info.Config?.Image || undefined,
    workspace,
    started: false,
    kept: true,
    inside,
    // Started by a Deft under the list (a batch's task container): its forwarder listens inside.
    proxied: forwarded(info.Config?.Labels),
    close: () => Promise.resolve(),
  };
}
