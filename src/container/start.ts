/**
 * A new container for a session's tools: from an image (named, built or loaded), isolated by the
 * process policy, labelled with this run's proof, alive only as long as Deft holds its lifeline
 * (unless kept), and removed with what Deft made for it.
 */
import {
  type ContainerCli,
  containerExecLaunch,
  containerInspectLaunch,
  containerLaunch,
  containerRemoveLaunch,
  containerSeccompProfile,
  SECCOMP_BASE_PROFILES,
} from "../policy/container_cli.ts";
import { spawnChild } from "../policy/process.ts";
import {
  CHECKED_MARK,
  checkedHostArgv,
  execIn,
  NOT_YET_RUNNING,
  prepareInside,
  workspacePlan,
} from "./checks.ts";
import { built, dropMade, imageWorkdir, loadImage, type Made } from "./images.ts";
import { type DeftInside, INSIDE_BOOT, prepareDeftInside } from "./inside.ts";
import { DEFT_LABEL, KEEP_LABEL, sweepImages, sweepLeftovers } from "./leftovers.ts";
import type { Container, ContainerOptions } from "./options.ts";
import { stampLabels } from "./ownership.ts";
import { ContainerError, containerName, query, QUERY_TIMEOUT_MS } from "./runtime.ts";

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

/** Resolves after `ms`, or (sooner) when `cut` resolves; never holds Deft open. */
function pause(ms: number, cut?: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    Deno.unrefTimer(timer);
    cut?.then(() => {
      clearTimeout(timer);
      resolve();
    }, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Waits until the container `id` runs; a ContainerError with the runtime's words if it ended.
 * `started` resolves once its process has started (the keeper's echo; a detached client's end):
 * the runtime is asked only from then on, and again at short pauses until it says running.
 */
async function waitRunning(
  cli: ContainerCli,
  id: string,
  child: Deno.ChildProcess,
  detached: boolean,
  stderr: () => string,
  started: Promise<unknown>,
): Promise<string> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited: Deno.CommandStatus | undefined;
  child.status.then((s) => exited = s);
  await pause(START_TIMEOUT_MS, Promise.race([started, child.status]));
  let wait = 5;
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
    await pause(wait);
    wait = Math.min(wait * 2, 100);
  }
  const said = stderr().trim().split("\n").slice(-3).join(" ");
  throw new ContainerError(
    `the container could not be started by ${cli.program}${said ? `: ${said}` : ""}`,
  );
}

/**
 * Checks the container and starts the tool host inside in one `exec` (`checkedHostArgv`), its
 * boot message written at once, so Deno and the tool worker load while Deft finishes the start.
 * The host once its checks passed; undefined when they did not (or the mark never came), for
 * the checks one by one to say why. Not holding Deft open once returned.
 */
async function startHost(
  cli: ContainerCli,
  id: string,
  inside: DeftInside,
  workspace: string,
): Promise<Deno.ChildProcess | undefined> {
  const boot = new TextEncoder().encode(`${JSON.stringify(INSIDE_BOOT)}\n`);
  for (let tries = 0;; tries++) {
    const launch = containerExecLaunch(cli, id, {
      argv: checkedHostArgv(inside, workspace),
      env: inside.env,
      interactive: true,
    });
    const child = spawnChild(launch, { stdin: "piped", detached: true });
    const writer = child.stdin.getWriter();
    // Gone at once: what it said on stderr tells.
    writer.write(boot).catch(() => {});
    writer.releaseLock();
    const said = await checkedMark(child.stderr);
    if (said === true) {
      child.unref();
      return child;
    }
    killHost(child);
    await child.status.catch(() => {});
    // The keeper may have started a moment before the runtime marks the container running.
    if (tries >= 20 || !NOT_YET_RUNNING.test(said)) return undefined;
    await pause(10);
  }
}

/**
 * Reads `stderr` up to the line `CHECKED_MARK` (true; the stream is released for the link), or
 * to its end or a deadline (what it said).
 */
async function checkedMark(stderr: ReadableStream<Uint8Array>): Promise<true | string> {
  const reader = stderr.getReader();
  const decoder = new TextDecoder();
  let said = "";
  const deadline = pause(QUERY_TIMEOUT_MS).then(() => ({ done: true, value: undefined }));
  try {
    while (true) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) return said;
      said = (said + decoder.decode(value, { stream: true })).slice(-4096);
      if (said.includes(`${CHECKED_MARK}\n`)) return true;
    }
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // A read still pending (the deadline came first): the host is killed anyway.
    }
  }
}

/** Ends a started tool host's client (the container's end ends the host inside). */
function killHost(child: Deno.ChildProcess | undefined): void {
  try {
    child?.kill("SIGKILL");
  } catch {
    // Already gone.
  }
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
  const kept = made && { ref: made.ref, removed: !opts.keep };
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
  // container before Deft has closed its tools). Its stdout carries the keeper's echo of the one
  // line Deft writes, its sign that the container's process has started.
  const keep = opts.keep ?? false;
  const child = spawnChild(launch, {
    stdin: "piped",
    stdout: keep ? "null" : "piped",
    stderr: "piped",
    detached: true,
  });
  let stderr = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr = (stderr + decoder.decode(chunk)).slice(-4096);
  })().catch(() => {});
  // Deft's end of the container's lifeline: one empty line (echoed by the keeper, `cat`), then
  // nothing; closed when Deft ends. A detached (kept) run's client ends once the container runs.
  const lifeline = child.stdin.getWriter();
  let started: Promise<unknown> = child.status;
  if (!keep) {
    lifeline.write(new Uint8Array([10])).catch(() => {});
    started = new Promise<void>((echoed) => {
      void (async () => {
        // The first bytes are the echo; whatever follows (nothing of Deft's) is read and dropped.
        for await (const _ of child.stdout) echoed();
      })().catch(() => {}).finally(echoed);
    });
  }
  let host: Deno.ChildProcess | undefined;
  let hostEnded = false;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    killHost(host);
    host = undefined;
    if (keep) {
      lifeline.releaseLock();
      child.unref();
      // Nothing of the session lives on in the kept container: every process but its keeper
      // (`cat`, its first) ends, those the model detached from its shell (`setsid`) too.
      await endSessionProcesses(cli, name);
      return;
    }
    const error = await remove(cli, name);
    await lifeline.close().catch(() => {});
    // Awaited now, so held: an unref'd client's end would not keep Deft's loop alive.
    child.ref();
    await child.status.catch(() => {});
    // The container is gone, so its image can go.
    const imageError = await dropImage();
    if (error || imageError) {
      throw new ContainerError([error, imageError].filter(Boolean).join("; "));
    }
  };
  let id: string;
  const running = waitRunning(cli, name, child, keep, () => stderr, started);
  running.catch(() => {});
  // The checks and the tool host's start in one `exec`, as soon as the keeper has echoed (it
  // asks again while the runtime has not yet marked the container running); the host is handed
  // out only if they pass, and when they do not, the checks one by one say why. Meanwhile the
  // runtime is asked for the container's id (a kept one's start: first that it runs).
  let failed = false;
  const hosting = (keep ? running : started)
    .then(() => startHost(cli, name, inside, plan.workspace))
    .then((h) => {
      // One that comes after the start failed ends (the container goes too).
      if (failed) killHost(h);
      else host = h;
      host?.status.then(() => hostEnded = true);
      return host;
    });
  hosting.catch(() => {});
  try {
    id = await running;
    if (!await hosting) await prepareInside(cli, name, image, inside, plan.workspace);
  } catch (e) {
    failed = true;
    if (seccomp) await Deno.remove(seccomp).catch(() => {});
    if (keep) {
      closed = true;
      killHost(host);
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
    takeHost: () => {
      const taken = hostEnded ? undefined : host;
      if (!taken) killHost(host);
      host = undefined;
      taken?.ref();
      return taken;
    },
    close,
  };
}
