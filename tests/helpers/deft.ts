/** Spawns `deft` the way a user would: `deno run` of main.ts with the `deft` task's flags. */
import { deftFlags } from "../../scripts/deft_flags.ts";
import { mockModelArgs } from "./mock_session.ts";
import { tempDirUntilExit } from "./temp.ts";

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
 * `deft interactive -w repo` against the mock model with no terminal, `stdin` typed as its input:
 * `options.args` go before the model's flags (`options.model` names the model, default `mock`);
 * it runs in `options.cwd` with `options.env`.
 */
export function interactiveOnStdin(
  repo: string,
  mock: { url: string },
  stdin: string,
  options: { args?: string[]; model?: string; cwd?: string; env?: Record<string, string> } = {},
): Promise<DeftRun> {
  return runDeft(
    ["interactive", "-w", repo, ...options.args ?? [], ...mockModelArgs(mock, options.model)],
    { cwd: options.cwd, env: options.env, stdin },
  );
}

/**
 * A temp dir to use as HOME and as the current folder, trusted in its own user config, so a
 * `deft.yaml` a test writes there is read in full (repository configs are untrusted otherwise).
 */
export async function trustedHome(prefix = "deft-home-"): Promise<string> {
  const home = await tempDirUntilExit(prefix);
  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/.config/deft/config.yaml`,
    `trusted_folders: [${JSON.stringify(home)}]\n`,
  );
  return home;
}

/**
 * `trustedHome(prefix)` whose user config also says `config(home)` (hooks, approvals, a network
 * list: YAML that may name files in the home), with `files` written into the home by name.
 */
export async function trustedHomeWith(
  prefix: string,
  config: (home: string) => string,
  files: Record<string, string> = {},
): Promise<string> {
  const home = await trustedHome(prefix);
  for (const [name, body] of Object.entries(files)) {
    await Deno.writeTextFile(`${home}/${name}`, body);
  }
  await Deno.writeTextFile(`${home}/.config/deft/config.yaml`, config(home), { append: true });
  return home;
}

/** How `runMocked` points `deft run` at the mock; each field has the default most tests want. */
export interface MockedRunOptions {
  /** `-p`; default `openai_compatible`. */
  provider?: string;
  /** `-m`; default `mock-model`. */
  model?: string;
  /** `--model-base-url`; default the mock's URL with `/v1` (where the OpenAI SDK posts). */
  baseUrl?: string;
  /** `-k`; default `k`. `null` passes no key (Ollama needs none; a test may want none). */
  apiKey?: string | null;
  /** Flags after the model's, e.g. `["--json"]` or `["-t", traj]`. */
  extra?: string[];
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string | Uint8Array;
}

/**
 * The argv of `deft run TASK -w WORKSPACE -p … -m … --model-base-url … -k … EXTRA` against the
 * mock model at `mock.url`, for a test that starts Deft some other way (a PTY, a raw spawn).
 */
export function mockRunArgs(
  mock: { url: string },
  task: string,
  workspace: string,
  options: MockedRunOptions = {},
): string[] {
  const model = [
    "-p",
    options.provider ?? "openai_compatible",
    "-m",
    options.model ?? "mock-model",
    "--model-base-url",
    options.baseUrl ?? `${mock.url}/v1`,
  ];
  const key = options.apiKey === null ? [] : ["-k", options.apiKey ?? "k"];
  return ["run", task, "-w", workspace, ...model, ...key, ...options.extra ?? []];
}

/** `deft run TASK` on `workspace` against the mock LLM `mock` (see `MockedRunOptions`). */
export function runMocked(
  mock: { url: string },
  task: string,
  workspace: string,
  options: MockedRunOptions = {},
): Promise<DeftRun> {
  const { cwd, env, stdin } = options;
  return runDeft(mockRunArgs(mock, task, workspace, options), { cwd, env, stdin });
}
