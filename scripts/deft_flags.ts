/** The flags of the `deft` task in deno.json, so tests, benchmarks and the demo run Deft as it does. */

const ROOT = new URL("..", import.meta.url).pathname;

/** The `--…` flags of the `deft` task (permissions, `--no-prompt`). */
export function deftFlags(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`));
  return (config.tasks.deft as string).split(/\s+/).filter((w) => w.startsWith("--"));
}
