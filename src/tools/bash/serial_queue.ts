/** Runs async jobs one at a time, in the order they were queued. */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Queues `job`; it starts when every job queued before it has settled. */
  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(job);
    this.#tail = result.catch(() => {});
    return result;
  }

  /** Resolves when every job queued so far has settled. */
  async idle(): Promise<void> {
    await this.#tail;
  }
}
