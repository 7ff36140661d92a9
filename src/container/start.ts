/**
 * A new container for a session's tools: from an image (named, built or loaded), isolated by the
 * process policy, labelled with this run's proof, alive only as long as Deft holds its lifeline
 * (unless kept), and removed with what Deft made for it.
 */
import {
  type ContainerCli,
  containerLaunch,
  containerSeccompProfile,
  SECCOMP_BASE_PROFILES,
} from "../policy/container_cli.ts";
import { workspacePlan } from "./checks.ts";
import { built, dropMade, imageWorkdir, loadImage, type Made } from "./images.ts";
import { type DeftInside, prepareDeftInside } from "./inside.ts";
import { NETWORK_LABEL, networkBinds, startForwarder } from "./network.ts";
import { DEFT_LABEL, KEEP_LABEL, sweepImages, sweepLeftovers } from "./leftovers.ts";
import type { Container, ContainerOptions } from "./options.ts";
import { stampLabels } from "./ownership.ts";
import { ContainerError, containerName } from "./runtime.ts";
import { ContainerRun } from "./run.ts";

/**
 * For a container with a host folder bound in: the runtime's default seccomp profile, changed so
 * that nothing inside can give a file a setuid or setgid bit (`containerSeccompProfile`), written
 * to a private file for the runtime's client to read. Returns the file; the caller removes it.
 */
async function setIdGuard(workingDir: string): Promise<string> {
  let base: unknown;
  for (const path of SECCOMP_BASE_PROFILES) {
    try {
      base = JSON.parse(await Deno.readTextFile(path));
      break;
    } catch {
      // Not here (or unreadable): the next.
    }
  }
  let profile: Record<string, unknown>;
  try {
    profile = containerSeccompProfile(base);
  } catch {
    throw new ContainerError(
      `-w ${workingDir} binds a host folder, and Deft binds one only with a seccomp profile that ` +
        "stops the container making setuid programs there (root inside owns the files it " +
        `writes); it builds on the runtimes' default profile, not found (${
          SECCOMP_BASE_PROFILES.join(", ")
        }). Install containers-common (Debian: golang-github-containers-common), or name a ` +
        "folder inside the image with -w.",
    );
  }
  const file = await Deno.makeTempFile({ prefix: "deft-seccomp-", suffix: ".json" });
  await Deno.chmod(file, 0o600);
  await Deno.writeTextFile(file, JSON.stringify(profile));
  return file;
}

/** What a start settles before the container's process: the runtime, image, workspace, labels. */
interface Prepared {
  cli: ContainerCli;
  name: string;
  image: string;
  plan: ReturnType<typeof workspacePlan>;
  labels: Record<string, string>;
  /** The image Deft built or loaded for this run, and whether it goes with the container. */
  madeImage?: { ref: string; removed: boolean };
  /** Removes the image Deft built or loaded (once; an error is returned, not thrown). */
  dropImage(): Promise<string | undefined>;
}

/**
 * Starts a container from `opts`' image (built or loaded first when asked), waits until it runs
 * and checks Deft can run in it. Throws ContainerError; a failed start leaves nothing behind.
 */
export async function startContainer(
  choose: () => Promise<ContainerCli>,
  likely: ContainerCli,
  opts: ContainerOptions,
  inside: DeftInside,
): Promise<Container> {
  if (!opts.image && !opts.dockerfile && !opts.imageFile) {
    throw new ContainerError(
      "a container needs --docker-image, --dockerfile-path, --docker-image-file or " +
        "--docker-container-id.",
    );
  }
  const ready = await prepare(choose, likely, opts, inside);
  const { cli, name, image, plan } = ready;
  let launch;
  let seccomp: string | undefined;
  try {
    if (plan.bind) seccomp = await setIdGuard(opts.workingDir!);
    launch = containerLaunch(cli, {
      seccompProfile: seccomp,
      image,
      name,
      labels: ready.labels,
      network: opts.network ? "host" : "none",
      memory: opts.memory,
      pidsLimit: opts.pidsLimit,
      binds: [
        ...inside.binds,
        ...(plan.bind ? [plan.bind] : []),
        ...(opts.networkProxy ? networkBinds(opts.networkProxy) : []),
      ],
      keep: opts.keep ?? false,
    });
  } catch (e) {
    await ready.dropImage();
    if (seccomp) await Deno.remove(seccomp).catch(() => {});
    throw e instanceof ContainerError ? e : new ContainerError((e as Error).message);
  }
  const run = new ContainerRun(cli, name, launch, opts.keep ?? false, ready.dropImage);
  let id: string;
  try {
    id = await run.ready(inside, plan.workspace, image);
  } finally {
    // The client has read the profile by now, or failed.
    if (seccomp) await Deno.remove(seccomp).catch(() => {});
  }
  if (opts.networkProxy) {
    try {
      await startForwarder(cli, id, inside);
    } catch (e) {
      await run.abandon();
      throw e;
    }
  }
  return run.container({
    id,
    image,
    madeImage: ready.madeImage,
    workspace: plan.workspace,
    kept: opts.keep ?? false,
    inside,
    proxied: opts.networkProxy !== undefined,
  });
}

/**
 * Everything before the container's process: the runtime (the likely one unless it cannot
 * answer), what dead runs left swept, the image built or loaded, its WORKDIR read, the labels
 * stamped. Throws with nothing left behind.
 */
async function prepare(
  choose: () => Promise<ContainerCli>,
  likely: ContainerCli,
  opts: ContainerOptions,
  inside: DeftInside,
): Promise<Prepared> {
  // The likely runtime's client asks at once: what dead runs left is swept (never this run's
  // own: ownership.ts), and a named image's WORKDIR read. Its answer about the image also says
  // the runtime works; only when it does not (or to build or load an image) is the runtime
  // chosen first (`choose`, whose errors say what is wrong with each runtime), and asked again
  // when the chosen one is another. The labels are stamped meanwhile.
  const ask = (c: ContainerCli) => {
    const asked = {
      sweeping: Promise.all([sweepLeftovers(c), sweepImages(c)]),
      workdir: opts.image ? imageWorkdir(c, opts.image) : undefined,
    };
    // Awaited where they are needed; a failure meanwhile must not count as unhandled.
    asked.sweeping.catch(() => {});
    asked.workdir?.catch(() => {});
    return asked;
  };
  let asked = ask(likely);
  const name = containerName();
  const stamping = stampLabels("container", name);
  stamping.catch(() => {});
  const settled = (...more: Promise<unknown>[]) =>
    Promise.allSettled([asked.sweeping, asked.workdir, stamping, ...more]);
  let cli = likely;
  if (!asked.workdir || !await asked.workdir.then(() => true, () => false)) {
    try {
      cli = await choose();
    } catch (e) {
      await settled();
      throw e;
    }
    if (cli.program !== likely.program || cli.ociRuntime !== likely.ociRuntime) {
      await settled();
      asked = ask(cli);
    }
  }
  // From source, the packages Deft's code may load, in Deno's cache before the run binds it.
  const preparing = prepareDeftInside(inside);
  preparing.catch(() => {});
  // An image Deft builds or loads new goes with the container, unless kept.
  let made: Made | undefined;
  try {
    await preparing;
    if (opts.dockerfile) made = await built(cli, opts);
    else if (opts.imageFile) made = await loadImage(cli, opts);
  } catch (e) {
    await settled(preparing);
    throw e;
  }
  const image = made?.ref ?? opts.image!;
  const madeImage = made && { ref: made.ref, removed: !opts.keep };
  const dropImage = async (): Promise<string | undefined> => {
    if (!made) return undefined;
    const dropping = made;
    made = undefined;
    return await dropMade(cli, dropping);
  };
  let plan: ReturnType<typeof workspacePlan>;
  try {
    const workdir = await (made ? imageWorkdir(cli, image) : asked.workdir);
    plan = workspacePlan(opts.workingDir, workdir, false);
    // The sweep may remove images: done before the run, which must find its own.
    await asked.sweeping;
  } catch (e) {
    await settled();
    await dropImage();
    throw e;
  }
  const labels: Record<string, string> = {
    ...opts.labels,
    [DEFT_LABEL]: "1",
    ...await stamping,
  };
  if (opts.keep) labels[KEEP_LABEL] = "1";
  // A batch's task attaches to it later (`--docker-container-id`) and must know the forwarder is
  // there, and the proxy behind it, to give its shell the proxy variables.
  if (opts.networkProxy) labels[NETWORK_LABEL] = opts.networkProxy;
  return { cli, name, image, plan, labels, madeImage, dropImage };
}
