import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

const FILE = [
  "sandbox: none",
  "allow_network: true",
  "shell_environment: { inherit: core, set: { MODE: fast } }",
  "tool_settings:",
  "  bash_timeout: 10",
  "  output_limit: 100",
  "  max_file_bytes: 1000",
  "  ckg_dir: /tmp/deft-ckg-test",
  "  deadlines: { bash: 5 }",
  "",
].join("\n");

Deno.test("deft config prints every key as the config file spells it, where the file puts it", async () => {
  await using home = await tempDir("deft-home-");
  const path = `${home.path}/deft.yaml`;
  await Deno.writeTextFile(path, FILE);
  const r = await runDeft(["config", "--config-file", path], {
    cwd: home.path,
    env: { HOME: home.path },
  });
  assert.equal(r.code, 0, r.stderr);
  // No camelCase key anywhere (the user-named keys in FILE have no lower-then-upper case).
  assert.doesNotMatch(r.stdout, /^\s*[a-z][a-z0-9_]*[A-Z]\w*:/m);
  const shown = parse(r.stdout);
  assert.equal(shown.sandbox, "none");
  assert.equal(shown.allow_network, true);
  assert.deepEqual(shown.shell_environment, { inherit: "core", set: { MODE: "fast" } });
  assert.deepEqual(shown.tool_settings, {
    bash_timeout: 10,
    output_limit: 100,
    max_file_bytes: 1000,
    ckg_dir: "/tmp/deft-ckg-test",
    deadlines: { bash: 5 },
  });

  // What it prints is a config file: fed back, it resolves to the same settings.
  const again = `${home.path}/again.yaml`;
  const { sandbox, allow_network, shell_environment, tool_settings } = shown;
  await Deno.writeTextFile(
    again,
    stringify({ sandbox, allow_network, shell_environment, tool_settings }),
  );
  const round = await runDeft(["config", "--config-file", again], {
    cwd: home.path,
    env: { HOME: home.path },
  });
  assert.equal(round.code, 0, round.stderr);
  assert.doesNotMatch(round.stderr, /unknown key/);
  const reread = parse(round.stdout);
  for (const key of ["sandbox", "allow_network", "shell_environment", "tool_settings"]) {
    assert.deepEqual(reread[key], shown[key], key);
  }
});
