/**
 * `ToolHost`, the main-thread side of a tool host. Tools that touch the system (files, processes)
 * run in a worker whose Deno permissions allow only the workspace, Deft's own dirs and
 * bash/bwrap/git, with no network; the executor holds their stand-ins (stand_in.ts), whose calls
 * go to the host here. The worker starts on the first call, over a link (link.ts: in this
 * process; sandboxed.ts and container.ts: in another), and is replaced after a crash or a call
 * past its deadline.
 */
import { drawBoundary, sessionTemp } from "../../policy/boundary.ts";
import type { SessionTemp } from "../../policy/session_temp.ts";
import type { CallPlan, ToolContext, ToolExecResult } from "../base.ts";
import type { Host } from "../stand_in.ts";
import type { HostReply, HostRequest, Probe } from "./protocol.ts";
import { workerEntry } from "./entry_points.ts";
import { type HostLink, type LinkEvents, type LinkStarter, startWorkerLink } from "./link.ts";
import { CLOSE_DEADLINE_SECONDS, deadlineSeconds } from "./deadlines.ts";

const START_TIMEOUT_MS = 60_000;
// setTimeout's largest delay; a longer one would fire at once.
const MAX_TIMER_MS = 2 ** 31 - 1;

type Outgoing =
  | { type: "call"; name: string; args: Record<string, unknown>; plan?: CallPlan }
  | { type: "close"; name: string | null }
  | { type: "probe"; probe: Probe };

/** Extra directories the worker may use besides the workspace. */
export interface HostDirs {
  cache?: string;
  /** Where the host makes its private temp folder (then in `cache` if Deft may not write it). */
  temp?: string;
}

/** A worker hosting confined tools, started on demand and restarted after a crash. */
export class ToolHost implements Host {
  #link?: Promise<HostLink>;
  #handle?: HostLink;
  #nextId = 0;
  readonly #pending = new Map<number, (reply: HostReply) => void>();
  /** Process groups the worker's tools started and that still run (killed with the worker). */
  readonly #children = new Set<number>();
  #open: Set<string>;
  #temp?: SessionTemp;

  constructor(
    private readonly context: ToolContext,
    private readonly names: string[],
    private readonly dirs: HostDirs = {},
    private readonly starter: LinkStarter = startWorkerLink,
  ) {
    this.#open = new Set(names);
  }

  #start(): Promise<HostLink> {
    if (this.#link) return this.#link;
    this.#temp ??= sessionTemp(this.dirs);
    const entry = workerEntry();
    const boundary = drawBoundary(this.context, this.dirs, entry, this.#temp);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let failure: string | undefined;
    const started = new Promise<HostLink>((resolve) => {
      let link: HostLink | undefined;
      timer = setTimeout(() => {
        if (link && this.#handle === link) {
          this.#crashed(`it did not start within ${START_TIMEOUT_MS / 1000} s`);
        }
      }, START_TIMEOUT_MS);
      const events: LinkEvents = {
        reply: (reply) => {
          if (this.#handle !== link) return;
          if (reply.type === "child") {
            if (!link!.reportsHostPids) return;
            if (reply.running) this.#children.add(reply.pid);
            else this.#children.delete(reply.pid);
            return;
          }
          if (reply.type === "ready") {
            clearTimeout(timer);
            const { context, dirs } = boundary;
            link!.post({ type: "init", context, names: this.names, dirs });
            resolve(link!);
            return;
          }
          const answer = this.#pending.get(reply.id);
          this.#pending.delete(reply.id);
          answer?.(reply);
        },
        failed: (message) => {
          clearTimeout(timer);
          if (this.#handle === link) this.#crashed(message);
          else failure ??= message;
        },
      };
      try {
        link = this.starter(boundary, entry, events);
        this.#handle = link;
      } catch (e) {
        failure = e instanceof Error ? e.message : String(e);
      }
    });
    this.#link = started;
    // A link that could not be started (no bwrap, no permission to run it) is reported now.
    if (failure !== undefined) {
      clearTimeout(timer);
      this.#terminate([`the tool host could not be started: ${failure}`]);
    }
    return started;
  }

  #crashed(message: string): void {
    this.#terminate([
      `the tool host stopped (${message}); tool state was lost and the next call starts fresh`,
    ]);
  }

  /**
   * Ends the worker and the process groups its tools started (a terminated worker would leave
   * them running); whatever still waits for it gets a "closed" reply carrying `errors`.
   */
  #terminate(errors: string[]): void {
    this.#handle?.terminate();
    this.#handle = undefined;
    for (const group of this.#children) {
      try {
        Deno.kill(-group, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    this.#children.clear();
    this.#link = undefined;
    const waiting = [...this.#pending.entries()];
    this.#pending.clear();
    for (const [id, resolve] of waiting) resolve({ type: "closed", id, errors });
  }

  /**
   * Sends one request and waits for its reply, at most `seconds`: past that the worker is
   * replaced (a stuck call cannot be interrupted otherwise) and the reply is a "closed" one.
   */
  #send(request: Outgoing, seconds: number, what: string): Promise<HostReply> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expire = () => {
        if (!this.#pending.has(id)) return;
        this.#pending.delete(id);
        resolve({
          type: "closed",
          id,
          errors: [
            `${what} did not finish within its deadline of ${seconds} s and was stopped. The ` +
            `tool host was restarted, so the bash shell and the edit history start fresh. ` +
            `Ask for less at once, or raise the deadline (--deadline TOOL=SECONDS, config ` +
            `tool_settings.deadlines).`,
          ],
        });
        this.#terminate([
          `the tool host was restarted because ${what} ran past its ${seconds} s deadline; ` +
          `tool state was lost and the next call starts fresh`,
        ]);
      };
      // Registered at once, so a crash during start-up answers this request too.
      this.#pending.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.#start().then((link) => {
        if (!this.#pending.has(id)) return;
        // The deadline counts the call's own run: starting the host has its limit of its own
        // (START_TIMEOUT_MS), so a short deadline is not eaten by a slow start under load.
        timer = setTimeout(expire, Math.min(seconds * 1000, MAX_TIMER_MS));
        try {
          link.post({ ...request, id } as HostRequest);
        } catch (e) {
          // Arguments that cannot be copied to the worker (too deep for structured cloning).
          const answer = this.#pending.get(id);
          this.#pending.delete(id);
          answer?.({
            type: "closed",
            id,
            errors: [`the call could not be handed to the tool host: ${(e as Error).message}`],
          });
        }
      });
    });
  }

  /** Runs one call in the worker, answered by its deadline at the latest. */
  async call(
    name: string,
    args: Record<string, unknown>,
    plan?: CallPlan,
  ): Promise<ToolExecResult> {
    this.#open.add(name);
    const settings = this.context.settings;
    const seconds = deadlineSeconds(settings.deadlines, name, args, settings.bashTimeoutSeconds);
    const reply = await this.#send({ type: "call", name, args, plan }, seconds, `The ${name} call`);
    if (reply.type === "result") return reply.result;
    const error = reply.type === "closed" ? reply.errors.join("; ") : "no result";
    return { output: null, error, error_code: -1 };
  }

  /**
   * Uses a permission directly inside the worker (starting it if needed): "allowed", or the
   * explained refusal. For checking the worker's fence; no tool and no model is involved.
   */
  async probe(probe: Probe): Promise<string> {
    const reply = await this.#send({ type: "probe", probe }, CLOSE_DEADLINE_SECONDS, "A probe");
    if (reply.type === "probed") return reply.outcome;
    return reply.type === "closed" ? `closed: ${reply.errors.join("; ")}` : "no answer";
  }

  /** The private temp folder while the worker runs. */
  get tempDir(): string | undefined {
    return this.#temp?.path;
  }

  /** Closes one tool; when none is left open the worker ends. */
  async close(name: string): Promise<void> {
    this.#open.delete(name);
    if (!this.#link) return;
    if (this.#open.size > 0) {
      const reply = await this.#send(
        { type: "close", name },
        CLOSE_DEADLINE_SECONDS,
        `Closing ${name}`,
      );
      if (reply.type === "closed" && reply.errors.length) throw new Error(reply.errors.join("; "));
      return;
    }
    const reply = await this.#send(
      { type: "close", name: null },
      CLOSE_DEADLINE_SECONDS,
      "Closing the tools",
    );
    this.#terminate([]);
    this.#temp?.remove();
    this.#temp = undefined;
    if (reply.type === "closed" && reply.errors.length) throw new Error(reply.errors.join("; "));
  }
}
