/** Drives `deft` through a real pseudo-terminal (python3's pty module), as a user at a terminal. */
import { deftFlags } from "../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT } from "./deft.ts";
import { mockModelArgs, sessionEnv } from "./mock_session.ts";
import { tempDir } from "./temp.ts";

/** One exchange: wait for `expect` (a regex) in the output, then `delay` seconds (default 0.05),
 * then type `send`. */
export interface PtyStep {
  expect?: string;
  send?: string;
  delay?: number;
}

/** What the terminal showed, the exit code (null when killed) and the step that timed out. */
export interface PtyRun {
  code: number | null;
  output: string;
  failed: number | null;
}

/** Runs `deft ARGS` in a pty and plays `steps`. */
export async function runDeftInPty(
  args: string[],
  steps: PtyStep[],
  options: {
    cwd: string;
    env?: Record<string, string>;
    timeoutSeconds?: number;
    /** The terminal's size (by default none is set: the program sees 0×0). */
    size?: { cols: number; rows: number };
  },
): Promise<PtyRun> {
  await using scriptDir = await tempDir("deft-pty-");
  const script = `${scriptDir.path}/script.json`;
  await Deno.writeTextFile(
    script,
    JSON.stringify({
      argv: [Deno.execPath(), "run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args],
      cwd: options.cwd,
      env: { NO_COLOR: "1", DENO_DIR: denoDir(), TERM: "xterm", ...options.env },
      steps,
      timeout: options.timeoutSeconds ?? 90,
      ...(options.size && { cols: options.size.cols, rows: options.size.rows }),
    }),
  );
  const out = await new Deno.Command("python3", {
    args: [`${REPO_ROOT}tests/helpers/pty_drive.py`, script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`pty driver failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(text) as PtyRun;
}

/**
 * `deft interactive -w repo` against the mock model in a pty, playing `steps`: `options.args`
 * go before the model's flags (`options.model` names the model, default `mock`); it runs in `options.cwd` (default: the repository) with
 * `options.env` (default: a fresh home's). The run, and its output as plain text.
 */
export async function interactiveInPty(
  repo: string,
  mock: { url: string },
  steps: PtyStep[],
  options: {
    args?: string[];
    model?: string;
    cwd?: string;
    env?: Record<string, string>;
    timeoutSeconds?: number;
    size?: { cols: number; rows: number };
  } = {},
): Promise<PtyRun & { out: string }> {
  const run = await runDeftInPty(
    ["interactive", "-w", repo, ...options.args ?? [], ...mockModelArgs(mock, options.model)],
    steps,
    {
      cwd: options.cwd ?? repo,
      env: options.env ?? await sessionEnv(),
      timeoutSeconds: options.timeoutSeconds,
      size: options.size,
    },
  );
  return { ...run, out: plain(run.output) };
}

/** The terminal output without escape sequences and carriage returns, for matching. */
export function plain(output: string): string {
  // deno-lint-ignore no-control-regex
  return output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "");
}
