/**
 * A started container's life: the runtime's client holding it (its own process group, so a Ctrl-C
 * at the terminal does not end it before Deft has closed its tools), Deft's lifeline to it (one
 * line written, echoed by the keeper, then nothing until Deft closes it), the wait until it runs,
 * the tool host started with the checks in one `exec`, and the end: removed with what Deft made
 * for it, or (kept) left with nothing of the session running.
 */
import {
  type ContainerCli,
  containerExecLaunch,
  containerInspectLaunch,
  containerRemoveLaunch,
} from "../policy/container_cli.ts";
import { type Launch, spawnChild } from "../policy/process.ts";
import { CHECKED_MARK, checkedHostArgv, execIn, NOT_YET_RUNNING, prepareInside } from "./checks.ts";
import { type DeftInside, INSIDE_BOOT } from "./inside.ts";
import type { Container } from "./options.ts";
import { ContainerError, query, QUERY_TIMEOUT_MS } from "./runtime.ts";

/** How long a new container may take to be running. */
const START_TIMEOUT_MS = 60_000;

/** The container's client, started; `ready` waits for it to run, `container` hands it out. */
export class ContainerRun {
  readonly #child: Deno.ChildProcess;
  readonly #lifeline: WritableStreamDefaultWriter<Uint8Array>;
  #stderr = "";
  /** Resolves once the container's process has started (the keeper's echo; a kept run's exit). */
  readonly #started: Promise<unknown>;
  #host: Deno.ChildProcess | undefined;
  #hostEnded = false;
  #closed = false;
  #failed = false;

  constructor(
    private readonly cli: ContainerCli,
    private readonly name: string,
    launch: Launch,
    private readonly keep: boolean,
    private readonly dropImage: () => Promise<string | undefined>,
  ) {
    // Its stdout carries the keeper's echo of the one line Deft writes, its sign that the
    // container's process has started.
    const child = spawnChild(launch, {
      stdin: "piped",
      stdout: keep ? "null" : "piped",
      stderr: "piped",
      detached: true,
    });
    this.#child = child;
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) {
        this.#stderr = (this.#stderr + decoder.decode(chunk)).slice(-4096);
      }
    })().catch(() => {});
    // Deft's end of the lifeline: one empty line (echoed by the keeper, `cat`), then nothing;
    // closed when Deft ends. A detached (kept) run's client ends once the container runs.
    this.#lifeline = child.stdin.getWriter();
    this.#started = child.status;
    if (!keep) {
      this.#lifeline.write(new Uint8Array([10])).catch(() => {});
      this.#started = new Promise<void>((echoed) => {
        void (async () => {
          // The first bytes are the echo; whatever follows (nothing of Deft's) is read and dropped.
          for await (const _ of child.stdout) echoed();
        })().catch(() => {}).finally(echoed);
      });
    }
  }

  /**
   * Waits until the container runs and the tool host inside has passed its checks; returns the
   * container's id. On failure nothing is left (the container, and an image made for it, go).
   */
  async ready(inside: DeftInside, workspace: string, image: string): Promise<string> {
    const { cli, name } = this;
    const running = waitRunning(
      cli,
      name,
      this.#child,
      this.keep,
      () => this.#stderr,
      this.#started,
    );
    running.catch(() => {});
    // The checks and the tool host's start in one `exec`, as soon as the keeper has echoed (it
    // asks again while the runtime has not yet marked the container running); the host is handed
    // out only if they pass, and when they do not, the checks one by one say why. Meanwhile the
    // runtime is asked for the container's id (a kept one's start: first that it runs).
    const hosting = (this.keep ? running : this.#started)
      .then(() => startHost(cli, name, inside, workspace))
      .then((h) => {
        // One that comes after the start failed ends (the container goes too).
        if (this.#failed) killHost(h);
        else this.#host = h;
        this.#host?.status.then(() => this.#hostEnded = true);
        return this.#host;
      });
    hosting.catch(() => {});
    try {
      const id = await running;
      if (!await hosting) await prepareInside(cli, name, image, inside, workspace);
      // Deft's exit must not wait for the client: it ends with the container, or (kept) at once.
      this.#child.unref();
      return id;
    } catch (e) {
      this.#failed = true;
      await this.#abandon();
      throw e;
    }
  }

  /** The session's view of the running container. */
  container(
    started: Pick<
      Container,
      "id" | "image" | "madeImage" | "workspace" | "kept" | "inside" | "proxied"
    >,
  ): Container {
    return {
      cli: this.cli,
      ...started,
      started: true,
      takeHost: () => {
        const taken = this.#hostEnded ? undefined : this.#host;
        if (!taken) killHost(this.#host);
        this.#host = undefined;
        taken?.ref();
        return taken;
      },
      close: () => this.close(),
    };
  }

  /**
   * Ends the session's use of the container: removed (with an image made for it), or when kept,
   * left running with every process of the session ended. Throws ContainerError when something
   * could not be removed.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    killHost(this.#host);
    this.#host = undefined;
    if (this.keep) {
      this.#lifeline.releaseLock();
      this.#child.unref();
      // Nothing of the session lives on in the kept container: every process but its keeper
      // (`cat`, its first) ends, those the model detached from its shell (`setsid`) too.
      await endSessionProcesses(this.cli, this.name);
      return;
    }
    const error = await remove(this.cli, this.name);
    await this.#lifeline.close().catch(() => {});
    // Awaited now, so held: an unref'd client's end would not keep Deft's loop alive.
    this.#child.ref();
    await this.#child.status.catch(() => {});
    // The container is gone, so its image can go.
    const imageError = await this.dropImage();
    if (error || imageError) {
      throw new ContainerError([error, imageError].filter(Boolean).join("; "));
    }
  }

  /** A start that failed after `ready`: nothing kept (see `#abandon`). */
  abandon(): Promise<void> {
    return this.#abandon();
  }

  /** A failed start: nothing kept, not even a kept run's container or an image made for it. */
  async #abandon(): Promise<void> {
    if (!this.keep) {
      await this.close().catch(() => {});
      return;
    }
    this.#closed = true;
    killHost(this.#host);
    this.#lifeline.releaseLock();
    this.#child.unref();
    await remove(this.cli, this.name);
    await this.dropImage();
  }
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
