/**
 * The two things nearly every test of a Deft session against the mock model starts with: the
 * flags that point Deft at the mock, and a fresh home of its own (so the user's config, sessions
 * and trust never leak in).
 */
import { tempDirUntilExit } from "./temp.ts";

/**
 * Flags for `deft …` that talk to `mock` (an OpenAI-compatible server) as model `model`; the
 * long `--provider`, since a bare `deft -p` means print.
 */
export function mockModelArgs(mock: { url: string }, model = "mock"): string[] {
  return [
    "--provider",
    "openai_compatible",
    "-m",
    model,
    "--model-base-url",
    `${mock.url}/v1`,
    "-k",
    "k",
  ];
}

/** A fresh home (gone when the test process ends) and the environment that makes it Deft's. */
export async function sessionHome(): Promise<{ home: string; env: Record<string, string> }> {
  const dir = await tempDirUntilExit("deft-home-");
  return { home: dir, env: { HOME: dir, XDG_STATE_HOME: `${dir}/state` } };
}

/** The environment of a fresh home, for tests that need no more of it. */
export async function sessionEnv(): Promise<Record<string, string>> {
  return (await sessionHome()).env;
}

/**
 * A config with two mock models: `main` (model `mock`, `maxSteps` steps) at `mainUrl`, and step
 * summaries (lakeview) on model `labeler` at `lakeUrl`; neither retries.
 */
export function lakeviewConfig(mainUrl: string, lakeUrl: string, maxSteps: number): string {
  return `
model_providers:
  main: { provider: openai_compatible, base_url: "${mainUrl}/v1", api_key: k }
  lake: { provider: openai_compatible, base_url: "${lakeUrl}/v1", api_key: k }
models:
  main: { model_provider: main, model: mock, max_retries: 0 }
  lake: { model_provider: lake, model: labeler, max_retries: 0 }
agents:
  deft_agent: { model: main, max_steps: ${maxSteps}, enable_lakeview: true }
lakeview: { model: lake }
`;
}
