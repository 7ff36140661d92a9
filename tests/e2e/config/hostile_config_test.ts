/** Hostile config files are usage errors (exit 2) that name the file, and loading is linear. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError, MAX_CONFIG_BYTES, parseConfig } from "../../../src/config/load.ts";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { loadYaml } from "../../../src/config/yaml.ts";

await loadYaml();

const BOMB = `a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
`;

Deno.test("an alias bomb, a too-deep and a too-large config exit 2 naming the file", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const files: [string, string, RegExp][] = [
    ["bomb.yaml", BOMB, /alias bomb/],
    ["deep.yaml", `a: ${"[".repeat(5_000)}${"]".repeat(5_000)}\n`, /nests more than 64/],
    ["deeper.yaml", `a: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`, /nests more than 64/],
    ["large.yaml", `# ${"x".repeat(MAX_CONFIG_BYTES)}\n`, /over the limit of 1048576/],
    ["dup.yaml", "sandbox: none\nsandbox: none\n", /line 2, column 1: Map keys must be unique/],
  ];
  for (const [name, text, message] of files) {
    const path = join(dir, name);
    await Deno.writeTextFile(path, text);
    const run = await runDeft(["config", "--config-file", path]);
    assert.equal(run.code, 2, `${name}: ${run.stderr}`);
    assert.ok(run.stderr.includes(path), `${name}: ${run.stderr}`);
    assert.match(run.stderr, message);
    assert.equal(run.stdout, "");
  }
});

function config(providers: number): string {
  let text = "model_providers:\n";
  for (let i = 0; i < providers; i++) {
    text += `  p${i}:\n    provider: openai\n    api_key: key-${i}\n`;
  }
  return text;
}

Deno.test("loading time grows linearly with the config's size", () => {
  const time = (text: string) => {
    const started = performance.now();
    const { config } = parseConfig(text, "big.yaml");
    assert.ok(Object.keys(config.model_providers).length > 0);
    return performance.now() - started;
  };
  time(config(500));
  const small = time(config(2_000));
  const large = time(config(16_000)); // ~0.8 MB, 8x the keys
  const ratio = large / small;
  console.log(`config of 16,000 providers / 2,000: ${ratio.toFixed(1)}x (linear: 8x)`);
  assert.ok(ratio < 25, `loading is not linear: ${ratio.toFixed(1)}x for 8x the size`);
});

Deno.test("duplicate keys are still refused, with their position", () => {
  assert.throws(
    () => parseConfig("tool_settings:\n  bash_timeout: 5\n  bash_timeout: 6\n", "c.yaml"),
    (e: unknown) =>
      e instanceof ConfigError && /c\.yaml: invalid YAML at line 3, column 3/.test(e.message),
  );
});
