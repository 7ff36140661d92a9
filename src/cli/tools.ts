/** `deft tools`: the registered tools, as a table or as provider definitions in JSON. */
import { isProvider, PROVIDERS } from "../config/providers.ts";
import { createTools, DEFAULT_TOOL_NAMES, registeredToolNames } from "../tools/registry.ts";
import { toolContext } from "./context.ts";
import { UsageError, writeStdout } from "./io.ts";

/** Options of `deft tools`. */
export interface ToolsOptions {
  provider?: string;
  json?: boolean;
}

/** Prints the tool list; returns the exit code. */
export async function toolsCommand(opts: ToolsOptions): Promise<number> {
  const provider = opts.provider ?? "openai";
  if (!isProvider(provider)) {
    throw new UsageError(`unknown provider '${provider}'. Known: ${PROVIDERS.join(", ")}.`);
  }
  const tools = createTools(await toolContext({ provider }), registeredToolNames());
  if (opts.json) {
    await writeStdout(JSON.stringify(tools.map((t) => t.jsonDefinition()), null, 2) + "\n");
    return 0;
  }
  const width = Math.max(...tools.map((t) => t.name.length));
  const lines = tools.map((t) => {
    const summary = t.description.split("\n")[0].replace(/(?<=\.) .*$/, "");
    const optIn = DEFAULT_TOOL_NAMES.includes(t.name) ? "" : " (opt-in)";
    return `${t.name.padEnd(width)}  ${summary}${optIn}`;
  });
  await writeStdout(lines.join("\n") + "\n");
  return 0;
}
