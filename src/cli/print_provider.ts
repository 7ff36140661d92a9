/**
 * On the bare launch line `-p` is `--print` (as in Claude Code), while after `deft run` it names
 * the provider; so `deft -p openai_compatible -m X "task"` would send the task
 * "openai_compatible task" to the config's provider. When the word after `-p`, as its own
 * argument, names a provider (a kind Deft knows, or a name under the config's `model_providers`),
 * the line is refused before anything runs, with the fix: a refusal costs one retyped line, a
 * wrong task costs a run (tokens, and tools acting on the workspace) the user never asked for.
 */
import { isProvider } from "../config/providers.ts";
import { loadConfig } from "../config/load.ts";
import { UsageError } from "../errors.ts";

/**
 * Throws a UsageError when the word after `-p` (`--print`) in `args`, the launch line as typed,
 * names a provider. That word is always a word of the task: `-p` takes no value.
 */
export async function refuseProviderAsTask(
  args: readonly string[],
  configFile?: string,
): Promise<void> {
  const end = args.indexOf("--");
  const line = end === -1 ? args : args.slice(0, end);
  const at = line.findIndex((a) => a === "-p" || a === "--print");
  const word = at === -1 ? undefined : line[at + 1];
  if (word === undefined || !/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(word)) return;
  if (!isProvider(word) && !(await configuredProviders(configFile)).includes(word)) return;
  throw new UsageError(
    `-p here is --print (as in Claude Code), so '${word}' would be sent as a word of the task: ` +
      `write --provider ${word} to choose the provider (or quote the task as one argument to ` +
      `send it as written).`,
  );
}

/** The provider names the config defines; none when it does not load (the run will say why). */
async function configuredProviders(configFile?: string): Promise<string[]> {
  try {
    return Object.keys((await loadConfig(configFile)).config.model_providers);
  } catch {
    return [];
  }
}
