/**
 * `deft hooks`: the hooks in force here and the file each came from; `deft hooks import FILE`:
 * a Claude Code settings file's hooks as Deft's `hooks:` YAML. Also the hooks of the tool-serving
 * commands (`deft serve`, `deft mcp`), which have no session to hold them.
 */
import { stringify } from "yaml";
import { loadConfig } from "../config/load.ts";
import { HookGate } from "../agent/hook_gate.ts";
import { Hooks } from "../hooks/hooks.ts";
import { importClaudeHooks } from "../hooks/import.ts";
import { hooksSource } from "../hooks/source.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { UsageError } from "../errors.ts";
import { writeStderr, writeStdout } from "./io.ts";

/** Prints the hooks in force (the config as `deft run` would load it here). */
export async function hooksList(opts: { configFile?: string } = {}): Promise<number> {
  const loaded = await loadConfig(opts.configFile);
  const hooks = new Hooks(loaded.config.hooks, hooksSource(loaded), {
    cwd: Deno.cwd(),
    report: () => {},
  });
  if (hooks.entries.length === 0) {
    await writeStdout(
      "no hooks configured" + (loaded.path ? ` (config: ${loaded.path})` : "") + "\n",
    );
    return 0;
  }
  const lines = hooks.entries.map((e) =>
    [
      e.event,
      e.event === "PreToolUse" || e.event === "PostToolUse" ? (e.matcher || "*") : "-",
      e.hook.command,
      `timeout ${e.hook.timeout ?? 60}s`,
      `from ${e.source ?? "(no file)"}`,
    ].map((s) => terminalText(s)).join("\t")
  );
  await writeStdout(lines.join("\n") + "\n");
  return 0;
}

/** Prints FILE's hooks as Deft's config YAML; what could not be converted goes to stderr. */
export async function hooksImport(file: string): Promise<number> {
  let settings: unknown;
  try {
    settings = JSON.parse(await Deno.readTextFile(file));
  } catch (e) {
    throw new UsageError(
      `cannot read ${file} as a Claude Code settings file (JSON): ${(e as Error).message}`,
    );
  }
  const imported = importClaudeHooks(settings);
  await writeStdout(stringify({ hooks: imported.hooks }));
  for (const note of imported.notes) writeStderr(`note: ${terminalText(note)}`);
  for (const line of imported.unmapped) writeStderr(`not imported: ${terminalText(line)}`);
  return 0;
}

/**
 * The PreToolUse/PostToolUse gate for `deft serve` and `deft mcp`, when the config has hooks
 * (those commands ask nobody, so there is no approval gate behind it).
 */
export async function toolServerHooks(workspace: string): Promise<HookGate | undefined> {
  const loaded = await loadConfig();
  const hooks = new Hooks(loaded.config.hooks, hooksSource(loaded), {
    cwd: workspace,
    report: (text) => writeStderr(`deft: warning: ${terminalText(text)}`),
  });
  return hooks.entries.length > 0 ? new HookGate(hooks, undefined, () => "never") : undefined;
}
