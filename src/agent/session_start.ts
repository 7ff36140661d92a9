/**
 * A session's start work that need not hold up its prompt (`deft interactive`): recording the
 * workspace's baseline, which runs git in the sandbox (the bubblewrap probe and a dozen git
 * processes). It is begun once, by whichever needs it first: the front end right after its prompt
 * is drawn, the first turn before the model acts, a tool call before it runs (every call waits at
 * the gate pipeline's step 0, src/gate/pipeline.ts), the patch before it is measured. So nothing the model or the user does
 * can act on the workspace before its start state is recorded.
 */

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
