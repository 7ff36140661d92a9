/** Shared setup for the bash tool tests: a temporary workspace and a tool that is always closed. */
import { BashTool } from "../../src/tools/bash/tool.ts";
import type { ToolExecResult, ToolSettings } from "../../src/tools/base.ts";
import { tempDir } from "./temp.ts";

/** A tool in a fresh workspace; `run` calls it, `dispose` closes it and removes the workspace. */
export interface Harness {
  tool: BashTool;
  workspace: string;
  run(command: string, extra?: Record<string, unknown>): Promise<ToolExecResult>;
  dispose(): Promise<void>;
}

/** Builds a harness; `prefix` may contain spaces to exercise quoting. */
export async function harness(settings: ToolSettings = {}, prefix = "deft-bash-test-"): Promise<
  Harness
> {
  const workspaceTemp = await tempDir(prefix);
  const workspace = workspaceTemp.path;
  const tool = new BashTool({ provider: "openai", workspace, settings });
  return {
    tool,
    workspace,
    run: (command, extra = {}) => tool.execute({ command, ...extra }),
    async dispose() {
      await tool.close();
      await workspaceTemp.remove();
    },
  };
}

/** Runs `body` with a harness that is disposed afterwards, even when `body` throws. */
export async function withHarness(
  settings: ToolSettings,
  body: (h: Harness) => Promise<void>,
  prefix?: string,
): Promise<void> {
  const h = await harness(settings, prefix);
  try {
    await body(h);
  } finally {
    await h.dispose();
  }
}

// /proc is read through bash: Deno asks for --allow-all to read /proc, `deno task test` does not.
async function bashLines(script: string, ...args: string[]): Promise<string[]> {
  const out = await new Deno.Command("bash", {
    args: ["-c", script, "deft-test", ...args],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
}

/** True while `pid` exists and is not a zombie. */
export async function isRunning(pid: number): Promise<boolean> {
  const state = await bashLines(
    'stat=$(< "/proc/$1/stat") || exit; s=${stat##*) }; echo "${s%% *}"',
    String(pid),
  );
  return state.length === 1 && state[0] !== "Z" && state[0] !== "X";
}

/** Waits until `check` holds, for at most `ms`; returns whether it held. */
export async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (true) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Pids of processes whose command line contains `needle` (host view, works for sandboxes). */
export async function pidsByCmdline(needle: string): Promise<number[]> {
  const pids = await bashLines(
    [
      "for f in /proc/[0-9]*/cmdline; do",
      "  p=${f#/proc/} p=${p%/cmdline}",
      "  [[ $p == $$ ]] && continue",
      "  mapfile -d '' -t a < \"$f\" 2>/dev/null || continue",
      '  [[ " ${a[*]} " == *"$1"* ]] && echo "$p"',
      "done",
    ].join("\n"),
    needle,
  );
  return pids.map(Number);
}
