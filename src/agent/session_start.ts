/**
 * A session's start work that need not hold up its prompt (`deft interactive`): recording the
 * workspace's baseline, which runs git in the sandbox (the bubblewrap probe and a dozen git
 * processes). It is begun once, by whichever needs it first: the front end right after its prompt
 * is drawn, the first turn before the model acts, a tool call before it runs (every call waits at
 * the gate: `afterStart`), the patch before it is measured. So nothing the model or the user does
 * can act on the workspace before its start state is recorded.
 */
import type { Tool } from "../tools/base.ts";
import { type CallGate, ToolExecutor } from "../tools/executor.ts";
import { type GateParts, GatePipeline } from "../gate/pipeline.ts";

/** Work begun at most once, by whoever asks for it first. */
export class StartWork {
  #running?: Promise<void>;

  constructor(private readonly work: () => Promise<void>) {}

  /** Begins the work (once) and resolves when it is done; rejects with its error. */
  run(): Promise<void> {
    return this.#running ??= this.work();
  }

  /** True once something has begun the work. */
  get begun(): boolean {
    return this.#running !== undefined;
  }

  /** Waits for the work if it was begun (its error was told where it was met); else at once. */
  async settled(): Promise<void> {
    await this.#running?.catch(() => {});
  }
}

/**
 * `gate` with every call waiting for `start` first (beginning it if nothing has): a call never
 * runs before the session's start state exists. A start that failed fails the call with its
 * error, before any step of the gate.
 */
export function afterStart(gate: CallGate, start: StartWork): CallGate {
  const inner = gate;
  return {
    check: async (tool, args) => {
      await start.run();
      return await inner.check(tool, args);
    },
    ...(inner.decide && {
      decide: async (tool, args, call) => {
        await start.run();
        return await inner.decide!(tool, args, call);
      },
    }),
    ...(inner.after && { after: (tool, args, result) => inner.after!(tool, args, result) }),
  };
}

/** The session's executor (the gate pipeline in front of `tools`) with each call after `start`. */
export function startingExecutor(
  tools: readonly Tool[],
  parts: GateParts,
  start: StartWork,
): ToolExecutor {
  return new ToolExecutor(tools, afterStart(new GatePipeline(parts), start));
}
