/** Small timing helpers shared by the benchmarks. */

/** The median of `values` (0 for none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Wall time of one run of a command (`env` added to this process's), in ms; throws when it fails. */
export async function timeCommand(
  cmd: string,
  args: string[],
  cwd?: string,
  env?: Record<string, string>,
): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(cmd, { args, cwd, env, stdout: "null", stderr: "piped" })
    .output();
  const elapsed = performance.now() - start;
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return elapsed;
}

/** Formats milliseconds for a report line. */
export function ms(value: number): string {
  return value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(1)} ms`;
}
