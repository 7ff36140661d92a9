/**
 * A new container for a session's tools: from an image (named, built or loaded), isolated by the
 * process policy, labelled with this run's proof, alive only as long as Deft holds its lifeline
 * (unless kept), and removed with what Deft made for it.
 */
import {
  type ContainerCli,
  containerInspectLaunch,
  containerLaunch,
  containerRemoveLaunch,
  containerSeccompProfile,
  SECCOMP_BASE_PROFILES,
} from "../policy/container_cli.ts";
import { spawnChild } from "../policy/process.ts";
import { execIn, prepareInside, workspacePlan } from "./checks.ts";
import { built, dropMade, imageWorkdir, loadImage, type Made } from "./images.ts";
import { type DeftInside, prepareDeftInside } from "./inside.ts";
import { DEFT_LABEL, KEEP_LABEL, sweepImages, sweepLeftovers } from "./leftovers.ts";
import type { Container, ContainerOptions } from "./options.ts";
import { stampLabels } from "./ownership.ts";
import { ContainerError, containerName, query } from "./runtime.ts";

/** How long a new container may take to be running. */
const START_TIMEOUT_MS = 60_000;

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

/** Waits until the container `id` runs; a ContainerError with the runtime's words if it ended. */
async function waitRunning(
  cli: ContainerCli,
  id: string,
  child: Deno.ChildProcess,
  detached: boolean,
  stderr: () => string,
): Promise<string> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited: Deno.CommandStatus | undefined;
  child.status.then((s) => exited = s);
  while (Date.now() < deadline) {
    const answer = await query(containerInspectLaunch(cli, [id]));
    if (answer.ok) {
      try {
        const [info] = JSON.parse(answer.stdout) as { Id: string; State?: { Running?: boolean } }[];
        if (info?.State?.Running) return info.Id;
      } catch {
        // Not JSON yet; ask again.
      }
    }
    // A detached run's client ends as soon as the container is created; an attached one's ends
    // with the container.
    if (exited && (!detached || !exited.success)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const said = stderr().trim().split("\n").slice(-3).join(" ");
  throw new ContainerError(
    `the container could not be started by ${cli.program}${said ? `: ${said}` : ""}`,
  );
}

/**
 * Ends every process in the container `id` but its first (the keeper), as root inside: a signal
 * to -1 reaches all of them but the caller and the namespace's init. Twice, for one that forked
 * while the first went round. The container's files stay as the session left them.
 */
async function endSessionProcesses(cli: ContainerCli, id: string): Promise<void> {
  for (let round = 0; round < 2; round++) {
    await execIn(cli, id, ["sh", "-c", "kill -KILL -1 2>/dev/null; true"]);
  }
}

/** Removes `id`, at once; errors are returned, not thrown (a cleanup must not hide the run's end). */
async function remove(cli: ContainerCli, id: string): Promise<string | undefined> {
  const answer = await query(containerRemoveLaunch(cli, [id]));
  if (answer.ok || /no such container|no container with name or id/i.test(answer.stderr)) {
    return undefined;
  }
  return `the container ${id} could not be removed: ${answer.stderr}`;
}

/**
 * Starts a container from `opts`' image (built or loaded first when asked), waits until it runs
 * and checks Deft can run in it. Throws ContainerError; a failed start leaves nothing behind.
 */
export async function startContainer(
  cli: ContainerCli,
  opts: ContainerOptions,
  inside: DeftInside,
): Promise<Container> {
  if (!opts.image && !opts.dockerfile && !opts.imageFile) {
    throw new ContainerError(
      "a container needs --docker-image, --dockerfile-path, --docker-image-file or " +
        "--docker-container-id.",
    );
  }
  await Promise.all([sweepLeftovers(cli), sweepImages(cli)]);
  await prepareDeftInside(inside);
  // An image Deft builds or loads new goes with the container, unless kept.
  let made: Made | undefined;
  if (opts.dockerfile) made = await built(cli, opts);
  else if (opts.imageFile) made = await loadImage(cli, opts);
  const image = made?.ref ?? opts.image!;
  const kept = made && { ref: made.ref, removed: !opts.keep };
  const dropImage = async (): Promise<string | undefined> => {
    if (!made) return undefined;
    const dropping = made;
    made = undefined;
    return await dropMade(cli, dropping);
  };
  let workdir: string | undefined;
  let plan: ReturnType<typeof workspacePlan>;
  try {
    workdir = await imageWorkdir(cli, image);
    plan = workspacePlan(opts.workingDir, workdir, false);
  } catch (e) {
    await dropImage();
    throw e;
  }
  const name = containerName();
  const labels: Record<string, string> = {
    ...opts.labels,
    [DEFT_LABEL]: "1",
    ...await stampLabels("container", name),
  };
  if (opts.keep) labels[KEEP_LABEL] = "1";
  let launch;
  let seccomp: string | undefined;
  try {
    if (plan.bind) seccomp = await setIdGuard(opts.workingDir!);
    launch = containerLaunch(cli, {
      seccompProfile: seccomp,
      image,
      name,
      labels,
      network: opts.network ? "host" : "none",
      memory: opts.memory,
      pidsLimit: opts.pidsLimit,
      binds: [...inside.binds, ...(plan.bind ? [plan.bind] : [])],
      keep: opts.keep ?? false,
    });
  } catch (e) {
    await dropImage();
    if (seccomp) await Deno.remove(seccomp).catch(() => {});
    throw e instanceof ContainerError ? e : new ContainerError((e as Error).message);
  }
  // Its own session: a Ctrl-C at the terminal must not reach the client (it would end the
  // container before Deft has closed its tools).
  const child = spawnChild(launch, {
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
    detached: true,
  });
  let stderr = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr = (stderr + decoder.decode(chunk)).slice(-4096);
  })().catch(() => {});
  // Deft's end of the container's lifeline; never written, closed when Deft ends.
  const lifeline = child.stdin.getWriter();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (opts.keep) {
      lifeline.releaseLock();
      child.unref();
      // Nothing of the session lives on in the kept container: every process but its keeper
      // (`cat`, its first) ends, those the model detached from its shell (`setsid`) too.
      await endSessionProcesses(cli, name);
      return;
    }
    const error = await remove(cli, name);
    await lifeline.close().catch(() => {});
    await child.status.catch(() => {});
    // The container is gone, so its image can go.
    const imageError = await dropImage();
    if (error || imageError) {
      throw new ContainerError([error, imageError].filter(Boolean).join("; "));
    }
  };
  let id: string;
  try {
    id = await waitRunning(cli, name, child, opts.keep ?? false, () => stderr);
    await prepareInside(cli, name, image, inside, plan.workspace);
  } catch (e) {
    if (seccomp) await Deno.remove(seccomp).catch(() => {});
    if (opts.keep) {
      closed = true;
      lifeline.releaseLock();
      child.unref();
      await remove(cli, name);
      // A failed start keeps nothing, not even an image built or loaded for it.
      await dropImage();
    } else {
      await close().catch(() => {});
    }
    throw e;
  }
  // The client has read the profile: the container runs.
  if (seccomp) await Deno.remove(seccomp).catch(() => {});
  // Deft's exit must not wait for the client: it ends with the container, or (kept) at once.
  child.unref();
  return {
    cli,
    id,
    image,
    madeImage: kept,
    workspace: plan.workspace,
    started: true,
    kept: opts.keep ?? false,
    inside,
    close,
  };
}
