/**
 * Issue 52: `deft hooks import` converts a Claude Code settings file's `permissions` as well as its
 * hooks; the YAML it prints loads as Deft's config, and `deft approvals` then lists the rules.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../../src/config/load.ts";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { loadYaml } from "../../../src/config/yaml.ts";

await loadYaml();

const LONG = "npx prettier --write --log-level warn --no-error-on-unmatched-pattern " +
  '"$(jq -r .tool_input.file_path)" && echo formatted the file that was just edited';

Deno.test("deft hooks import: permissions become approvals: the printed YAML is a valid config, and deft approvals lists its rules", async () => {
  await using dir = await tempDir("deft-import-perms-");
  const home = dir.path;
  await Deno.mkdir(`${home}/project/.claude`, { recursive: true });
  const settings = `${home}/project/.claude/settings.json`;
  await Deno.writeTextFile(
    settings,
    JSON.stringify({
      hooks: {
        PostToolUse: [{ matcher: "Write|Edit", hooks: [{ type: "command", command: LONG }] }],
      },
      permissions: {
        allow: ["Bash(npm run test:*)", "Edit(src/**)", "mcp__github__create_issue"],
        ask: ["Bash(git push)"],
        deny: ["Read(./secrets/**)", "WebFetch(domain:example.com)", "Edit(.env)"],
      },
    }),
  );
  const env = { HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_STATE_HOME: `${home}/state` };
  const imported = await runDeft(["hooks", "import", settings], { cwd: `${home}/project`, env });
  assert.equal(imported.code, 0, imported.stderr);
  // Deft's own loader accepts it whole: hooks and approvals.
  const { config, warnings } = parseConfig(imported.stdout, "imported.yaml");
  assert.deepEqual(warnings, []);
  assert.deepEqual(config.approvals, {
    allow: ["$ npm run test", "edit src/**", "tool mcp__github__create_issue"],
    ask: ["$ git push"],
    deny: ["edit .env", "edit **/.env/**"],
  });
  assert.equal(config.hooks.PostToolUse?.[0].hooks[0].command, LONG);
  assert.ok(imported.stdout.includes(LONG), "the long hook command is printed on one line");
  // What has no Deft rule is named on stderr with its reason.
  assert.match(
    imported.stderr,
    /not imported: permissions\.deny "Read\(\.\/secrets\/\*\*\)": .*reading/,
  );
  assert.match(
    imported.stderr,
    /not imported: permissions\.deny "WebFetch\(domain:example\.com\)"/,
  );
  assert.match(imported.stderr, /note: permissions\.ask "Bash\(git push\)": .*longer commands/);

  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(`${home}/.config/deft/config.yaml`, imported.stdout);
  const listed = await runDeft(["approvals"], { cwd: `${home}/project`, env });
  assert.equal(listed.code, 0, listed.stderr);
  for (
    const rule of ["$ git push", "edit .env", "$ npm run test", "tool mcp__github__create_issue"]
  ) {
    assert.ok(listed.stdout.includes(`  ${rule}  `), `${rule} in:\n${listed.stdout}`);
  }
  assert.match(listed.stdout, /^1\. deny +edit \.env/m);
});
