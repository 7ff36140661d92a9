/**
 * Environment reads that never throw: Deft runs without `--allow-env` too (the minimal flag sets
 * in README), and then a variable it may not read counts as unset.
 */

/** The variable's value, or undefined when it is unset, empty or not readable. */
export function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

/** Every readable variable; empty when the environment may not be read. */
export function envObject(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}
