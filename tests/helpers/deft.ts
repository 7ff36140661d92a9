/** Spawns `deft` the way a user would: `deno run` of main.ts with the `deft` task's flags. */
import { deftFlags } from "../../scripts/deft_flags.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The repository root, with a trailing slash. */
export const REPO_ROOT = ROOT;

/** What a finished `deft` process left behind. */
export interface DeftRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Deno's cache directory as this process sees it. */
export function denoDir(): string {
  return Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
}

/** Runs `deft ARGS`; `stdin` is piped in when given, else stdin is empty. */
export async function runDeft(
  args: string[],
  options: { stdin?: string | Uint8Array; cwd?: string; env?: Record<string, string> } = {},
): Promise<DeftRun> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${ROOT}main.ts`, ...args],
    cwd: options.cwd,
    // Tests often point HOME at a temp dir; keep Deno's own cache where it is, so the child
    // does not fetch package metadata again.
    env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...options.env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  if (options.stdin !== undefined) {
    const bytes = typeof options.stdin === "string"
      ? new TextEncoder().encode(options.stdin)
      : options.stdin;
    await writer.write(bytes);
  }
  await writer.close();
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/**
 * A temp dir to use as HOME and as the current folder, trusted in its own user config, so a
 * `deft.yaml` a test writes there is read in full (repository configs are untrusted otherwise).
 */
export async function trustedHome(prefix = "deft-home-"): Promise<string> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/.config/deft/config.yaml`,
    `trusted_folders: [${JSON.stringify(home)}]\n`,
  );
  return home;
}

/** `deft run TASK` on `workspace` against the mock model at `mockUrl`, then `extra` flags. */
export function mockRunArgs(
  mockUrl: string,
  task: string,
  workspace: string,
  extra: string[] = [],
): string[] {
  const model = [
    "-p",
    "openai_compatible",
    "-m",
    "mock-model",
    "--model-base-url",
    `${mockUrl}/v1`,
  ];
  return ["run", task, "-w", workspace, ...model, "-k", "k", ...extra];
}
