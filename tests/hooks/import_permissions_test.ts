import assert from "node:assert/strict";
import { importClaudePermissions, mapPermission } from "../../src/hooks/import_permissions.ts";
import { ApprovalRules } from "../../src/agent/approval_rules.ts";
import type { ApprovalAction } from "../../src/config/approval_rules.ts";
import type { CallEffect } from "../../src/tools/base.ts";

/** The Deft rule texts an entry maps to, or undefined when it has none. */
function rules(entry: string, action: ApprovalAction = "deny", home?: string) {
  const m = mapPermission(entry, action, home);
  return "rules" in m ? m.rules : undefined;
}

Deno.test("permissions import: the mapping table", () => {
  const table: [string, ApprovalAction, string[] | undefined][] = [
    ["Bash", "allow", ["tool bash"]],
    ["Bash(*)", "deny", ["tool bash"]],
    ["Bash(npm run test:*)", "allow", ["$ npm run test"]],
    ["Bash(git log *)", "allow", ["$ git log"]],
    ["Bash(git push)", "deny", ["$ git push"]],
    ["Bash(git push)", "ask", ["$ git push"]],
    ["Bash(git status)", "allow", undefined],
    ["Bash(ls*)", "deny", undefined],
    ["Bash(git * main)", "deny", undefined],
    ["Bash(echo hi > f:*)", "allow", undefined],
    ["Edit", "ask", ["edit **"]],
    ["Edit(src/**)", "allow", ["edit src/**"]],
    ["Write(src/**/*.ts)", "allow", ["edit src/**/*.ts"]],
    ["MultiEdit(./docs/*)", "allow", ["edit docs/**"]],
    ["Edit(*.lock)", "deny", ["edit *.lock"]],
    ["Edit(.env)", "deny", ["edit .env", "edit **/.env/**"]],
    ["Edit(secrets/)", "deny", ["edit **/secrets/**"]],
    ["Edit(/config/prod.yaml)", "deny", ["edit config/prod.yaml", "edit config/prod.yaml/**"]],
    ["Edit(//etc/hosts)", "deny", ["edit /etc/hosts", "edit /etc/hosts/**"]],
    ["Edit(~/.bashrc)", "deny", ["edit /home/u/.bashrc", "edit /home/u/.bashrc/**"]],
    ["Edit(src/[ab].ts)", "deny", undefined],
    ["Edit(src/*.{ts,js})", "deny", undefined],
    ["Edit(../other/**)", "deny", undefined],
    ["mcp__github__create_issue", "allow", ["tool mcp__github__create_issue"]],
    ["mcp__github", "allow", undefined],
    ["mcp__github__*", "deny", undefined],
    ["Read(./secrets/**)", "deny", undefined],
    ["Grep", "allow", undefined],
    ["WebFetch(domain:example.com)", "allow", undefined],
    ["WebSearch", "deny", undefined],
    ["NotebookEdit", "deny", undefined],
    ["Task", "allow", undefined],
    ["not a rule(", "allow", undefined],
  ];
  for (const [entry, action, want] of table) {
    assert.deepEqual(rules(entry, action, "/home/u"), want, `${action} ${entry}`);
  }
  assert.equal(rules("Edit(~/.bashrc)"), undefined, "no home folder: `~` is not guessed");
});

Deno.test("permissions import: every entry without a Deft rule is named with its reason; notes say where a rule is stricter", () => {
  const out = importClaudePermissions({
    permissions: {
      allow: ["Bash(npm run test:*)", "Bash(git status)", "Read(./src/**)", "Edit(src/**)"],
      ask: ["Bash(git push)"],
      deny: ["WebFetch(domain:example.com)", "Edit(.env)", "mcp__github", 7],
      defaultMode: "acceptEdits",
    },
  });
  assert.deepEqual(out.approvals, {
    allow: ["$ npm run test", "edit src/**"],
    ask: ["$ git push"],
    deny: ["edit .env", "edit **/.env/**"],
  });
  const named = (entry: string) => out.unmapped.find((l) => l.includes(entry));
  assert.match(named('"Bash(git status)"') ?? "", /exactly this command.*every longer command/);
  assert.match(named('"Read(./src/**)"') ?? "", /cannot name reading a path/);
  assert.match(named("WebFetch") ?? "", /no WebFetch tool/);
  assert.match(named('"mcp__github"') ?? "", /every tool of an MCP server/);
  assert.match(named("deny 7") ?? "", /not a rule text/);
  assert.match(named("defaultMode") ?? "", /no such setting/);
  assert.equal(out.unmapped.length, 6, out.unmapped.join("\n"));
  assert.match(out.notes.join("\n"), /git push.*exact command.*also asks about longer commands/);
});

Deno.test("permissions import: the rules judge calls as Claude Code's did", () => {
  const out = importClaudePermissions({
    permissions: {
      allow: ["Bash(npm run test:*)", "Edit(src/**)"],
      deny: ["Bash(git push)", "Edit(.env)", "Edit(secrets/)"],
    },
  });
  const list = (["allow", "deny"] as const).flatMap((action) =>
    (out.approvals[action] ?? []).map((text) => ({
      action,
      text,
      source: "imported",
      origin: "user" as const,
    }))
  );
  const gate = new ApprovalRules(list);
  const command = (c: string): CallEffect => ({ kind: "command", command: c });
  const edit = (p: string): CallEffect => ({ kind: "edit", path: p, summary: "" });
  const action = (e: CallEffect) => gate.match("x", e, "/ws")?.action;
  assert.equal(action(command("npm run test -- --watch")), "allow");
  assert.equal(action(command("npm run build")), undefined);
  assert.equal(action(command("git push --force origin main")), "deny");
  assert.equal(action(edit("src/a/b.ts")), "allow");
  assert.equal(action(edit("lib/a.ts")), undefined);
  assert.equal(action(edit("config/.env")), "deny");
  assert.equal(action(edit(".env")), "deny");
  assert.equal(action(edit("deploy/secrets/key.pem")), "deny");
});
