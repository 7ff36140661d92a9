/**
 * `deft config` shows the network list in force and the file each entry came from; a cloned
 * repository's own `deft.yaml` (untrusted) narrows the user's list and cannot widen it.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("deft config: the network list, its sources, and a repository that only narrows", async () => {
  await using homeDir = await tempDir("deft-home-");
  await using repoDir = await tempDir("deft-clone-");
  const home = homeDir.path;
  const repo = repoDir.path;
  const env = { HOME: home, XDG_CONFIG_HOME: `${home}/.config` };
  const userConfig = `${home}/.config/deft/config.yaml`;
  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    userConfig,
    [
      "network:",
      "  allow:",
      "    - pypi.org",
      '    - { host: "*.example.com", reason: "docs and forge" }',
      "",
    ].join("\n"),
  );
  const mine = await runDeft(["config"], { cwd: home, env });
  assert.equal(mine.code, 0, mine.stderr);
  assert.deepEqual(parse(mine.stdout).network, {
    allow: [
      { entry: "pypi.org", from: userConfig },
      { entry: "*.example.com", reason: "docs and forge", from: userConfig },
    ],
    deny: [],
  });

  await Deno.writeTextFile(
    `${repo}/deft.yaml`,
    "network:\n  allow: [docs.example.com, exfil.test]\n  deny: [upload.example.com]\n",
  );
  const narrowed = await runDeft(["config"], { cwd: repo, env });
  assert.equal(narrowed.code, 0, narrowed.stderr);
  assert.deepEqual(parse(narrowed.stdout).network, {
    allow: [{ entry: "docs.example.com", from: "deft.yaml" }],
    deny: [{ entry: "upload.example.com", from: "deft.yaml" }],
  });
  assert.match(narrowed.stderr, /"exfil\.test" is not in it and was ignored/);

  await Deno.writeTextFile(`${repo}/deft.yaml`, "network:\n  allow: ['::1']\n");
  const bad = await runDeft(["config"], { cwd: repo, env });
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /deft\.yaml: 'network\.allow\.0' \(line 2, column 11\): "::1": an IPv6 address must be written in brackets/,
  );
});

Deno.test("deft config: says what the network list covers: sandboxed MCP servers and hooks, not those outside", async () => {
  await using homeDir = await tempDir("deft-home-");
  const home = homeDir.path;
  const env = { HOME: home, XDG_CONFIG_HOME: `${home}/.config` };
  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/.config/deft/config.yaml`,
    [
      "sandbox: workspace-write",
      "network:",
      "  allow: [pypi.org]",
      "mcp_servers:",
      "  docs:",
      "    command: docs-server",
      "  notes:",
      "    command: notes-server",
      "    sandbox: none",
      "hooks:",
      "  PostToolUse:",
      "    - hooks:",
      "        - { type: command, command: ./check.sh }",
      "        - { type: command, command: ./lint.sh }",
      "        - { type: command, command: notify-send done, sandbox: none }",
      "",
    ].join("\n"),
  );
  const shown = await runDeft(["config"], { cwd: home, env });
  assert.equal(shown.code, 0, shown.stderr);
  const scope = parse(shown.stdout).network_scope;
  assert.ok(
    scope.enforced_for.some((s: string) => s.startsWith("the sandboxed shell")),
    shown.stdout,
  );
  assert.ok(
    scope.enforced_for.includes("MCP servers (docs): they run sandboxed, like the shell"),
    shown.stdout,
  );
  assert.ok(
    scope.enforced_for.includes("hooks (2): they run sandboxed, like the shell"),
    shown.stdout,
  );
  assert.deepEqual(scope.not_enforced_for, [
    "MCP servers (notes): they run outside the sandbox, with your whole network; the list does " +
    "not reach them",
    "hooks with sandbox: none (1): they run outside the sandbox, with your whole network; the " +
    "list does not reach them",
  ]);

  // Without a list there is no scope to tell.
  await Deno.writeTextFile(`${home}/.config/deft/config.yaml`, "sandbox: workspace-write\n");
  const none = await runDeft(["config"], { cwd: home, env });
  assert.equal(none.code, 0, none.stderr);
  assert.equal(parse(none.stdout).network_scope, undefined);
});
