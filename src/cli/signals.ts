/**
 * The signals that end a command early (SIGINT, SIGTERM, SIGHUP) and the exit codes that report
 * them (128 + the signal's number), so every long-running command stops the same way: it closes
 * its tools (which ends every process they started) before it exits.
 */

/** The signals a command treats as "stop now", with the exit code each one ends with. */
export const STOP_SIGNALS: Readonly<Record<"SIGINT" | "SIGTERM" | "SIGHUP", number>> = {
  SIGINT: 130,
  SIGTERM: 143,
  SIGHUP: 129,
};

/**
 * Calls `handler` with the signal's name and exit code whenever one of `signals` (default: all
 * stop signals) arrives. Returns a function that removes the listeners.
 *
 * @example
 * ```ts
 * const remove = onStopSignals((_name, code) => finish(code));
 * ```
 */
export function onStopSignals(
  handler: (name: Deno.Signal, code: number) => void,
  signals: readonly (keyof typeof STOP_SIGNALS)[] = ["SIGINT", "SIGTERM", "SIGHUP"],
): () => void {
  const removers = signals.map((name) => {
    const listener = () => handler(name, STOP_SIGNALS[name]);
    try {
      Deno.addSignalListener(name, listener);
    } catch {
      return () => {}; // a signal this platform does not have
    }
    return () => Deno.removeSignalListener(name, listener);
  });
  return () => removers.forEach((remove) => remove());
}
