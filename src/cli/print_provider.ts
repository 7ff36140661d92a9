/**
 * On the bare launch line `-p` is `--print` (as in Claude Code), while after `deft run` it names
 * the provider; so `deft -p openai_compatible -m X "task"` would send the task
 * "openai_compatible task" to the config's provider. When the task's first word, as its own
 * argument, names a provider (a kind Deft knows, or a name under the config's `model_providers`),
 * the line is refused before anything runs, with the fix: a refusal costs one retyped line, a
 * wrong task costs a run (tokens, and tools acting on the workspace) the user never asked for.
 */
import { isProvider } from "../config/providers.ts";
import { loadConfig } from "../config/load.ts";
import { UsageError } from "../errors.ts";

/** Throws a UsageError when `words` (the launch line's task with `-p`) start with a provider. */
export async function refuseProviderAsTask(
  words: readonly string[],
  configFile?: string,
): Promise<void> {
  const first = words[0];
  if (first === undefined || !/^[A-Za-z0-9_.-]+$/.test(first)) return;
  if (!isProvider(first) && !(await configuredProviders(configFile)).includes(first)) return;
  throw new UsageError(
    `-p here is --print (as in Claude Code), so '${first}' would be sent as the task's first ` +
      `word: write --provider ${first} to choose the provider (or quote the task as one ` +
      `argument to send it as written).`,
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
