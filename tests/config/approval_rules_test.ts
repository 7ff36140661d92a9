/**
 * Approval rules as configured: a rule that is not one is an error naming it and its position;
 * a repository's lists keep deny and ask and drop allow with a warning; a project's saved rules
 * are keyed by its real path; an `--approval-rules` file is read only as a regular file within the
 * config size limit.
 */
import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "../../src/config/load.ts";
import {
  parseRule,
  policyFileRules,
  projectRules,
  repositoryRules,
  saveProjectRule,
} from "../../src/config/approval_rules.ts";
import { tempDir } from "../helpers/temp.ts";
import { loadYaml } from "../../src/config/yaml.ts";

// The config parsers are called here on text, with no file read first (src/config/yaml.ts).
await loadYaml();

Deno.test("approval rule texts: commands, edits, tools; anything else says how to write one", () => {
  assert.deepEqual(parseRule("$ npm run test"), { kind: "command", words: ["npm", "run", "test"] });
  assert.deepEqual(parseRule("edit src/**"), { kind: "edit", glob: "src/**" });
  assert.deepEqual(parseRule("tool bash"), { kind: "tool", name: "bash" });
  assert.match(String(parseRule("git status")), /write '\$ COMMAND PREFIX'/);
  assert.match(String(parseRule("$ git status && rm")), /without shell syntax/);
});

Deno.test("a config with a rule that is not one is refused, naming the key and its line", () => {
  assert.throws(
    () => parseConfig("approvals:\n  allow:\n    - git status\n", "/c.yaml"),
    (e: unknown) =>
      e instanceof ConfigError && /'approvals\.allow\.0' \(line 3/.test(e.message) &&
      /is not a rule/.test(e.message),
  );
  const ok = parseConfig("approvals:\n  deny: ['$ git push']\n", "/c.yaml");
  assert.deepEqual(ok.config.approvals, { deny: ["$ git push"] });
});

Deno.test("a repository's approval lists: deny and ask kept, allow dropped with a warning", () => {
  const r = repositoryRules(
    "approvals:\n  allow: ['$ rm']\n  ask: ['edit **']\n  deny: ['$ curl']\n",
    "/repo/deft.yaml",
  );
  assert.deepEqual(r.rules.map((x) => `${x.action} ${x.text}`), ["deny $ curl", "ask edit **"]);
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0], /never 'allow': its allow rules \(\$ rm\) are ignored/);
});

Deno.test("a project's saved rule holds for that real path only and can be removed", async () => {
  await using home = await tempDir();
  const saved = Deno.env.get("XDG_CONFIG_HOME");
  Deno.env.set("XDG_CONFIG_HOME", home.path);
  try {
    const file = await saveProjectRule("/work/a", "allow", "$ make test");
    assert.equal(file, `${home.path}/deft/project_approvals.yaml`);
    assert.deepEqual((await projectRules("/work/a")).map((r) => r.text), ["$ make test"]);
    assert.deepEqual(await projectRules("/work/ab"), []);
    await saveProjectRule("/work/a", "allow", "$ make test", true);
    assert.deepEqual(await projectRules("/work/a"), []);
  } finally {
    if (saved === undefined) Deno.env.delete("XDG_CONFIG_HOME");
    else Deno.env.set("XDG_CONFIG_HOME", saved);
  }
});

Deno.test("an --approval-rules file that is a device, a folder or too large is refused, naming it", async () => {
  await using dir = await tempDir();
  await assert.rejects(policyFileRules(dir.path), /is a folder, not a regular file/);
  const big = `${dir.path}/big.yaml`;
  await Deno.writeTextFile(big, `deny:\n${"  - $ rm\n".repeat(200_000)}`);
  await assert.rejects(
    policyFileRules(big),
    /big\.yaml: the config file is \d+ bytes, over the limit/,
  );
  // Last: without the bound, reading /dev/zero would never end.
  const zero = `${dir.path}/zero.yaml`;
  await Deno.symlink("/dev/zero", zero);
  await assert.rejects(
    policyFileRules(zero),
    /zero\.yaml is a character device, not a regular file/,
  );
  const ok = `${dir.path}/ok.yaml`;
  await Deno.writeTextFile(ok, "deny:\n  - $ rm\n");
  assert.deepEqual((await policyFileRules(ok)).map((r) => `${r.action} ${r.text}`), ["deny $ rm"]);
});

Deno.test("approval rules: a fetch rule names a host or a wildcard, nothing else", () => {
  assert.deepEqual(parseRule("fetch Docs.Example.com"), {
    kind: "fetch",
    host: "docs.example.com",
  });
  assert.deepEqual(parseRule("fetch *.example.com"), { kind: "fetch", host: "*.example.com" });
  for (
    const bad of [
      "fetch https://docs.example.com",
      "fetch docs.example.com:443",
      "fetch a/b",
      "fetch *",
    ]
  ) {
    assert.match(String(parseRule(bad)), /a fetch rule names a host/, bad);
  }
});
