/**
 * Approval rules end to end: an "always in this project" answer (on a real pseudo-terminal) is
 * saved outside the repository and holds in the next session of that project only; `deft
 * approvals` lists and removes it; a repository's `deft.yaml` may add a deny rule (applied at
 * once) but never an allow (ignored, with a warning); `--approval-rules FILE` gives a run a
 * policy.
 */
import assert from "node:assert/strict";
import {
  interactiveOnStdin,
  mockRunArgs,
  runDeft,
  runMocked,
  trustedHome,
} from "../../helpers/deft.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A session whose model runs `command` once, then says it is done. */
function oneCommand(command: string): MockLLM {
  return MockLLM.start([chatToolCalls([["bash", { command }]]), chatText("Done.")]);
}

Deno.test("rules (pty): always in this project survives a new session there, not in another; deft approvals lists and removes it", async () => {
  await using homeTemp = await tempDir();
  await using aTemp = await tempDir();
  await using bTemp = await tempDir();
  const home = homeTemp.path;
  const a = await Deno.realPath(aTemp.path);
  const b = await Deno.realPath(bTemp.path);
  const env = { HOME: home, XDG_STATE_HOME: `${home}/state` };
  const commands = ["--approval", "commands"];
  // Session 1 in A: asked; "always", then "this project".
  let mock = oneCommand("touch made1");
  try {
    const r = await runDeftInPty(
      mockRunArgs(mock, "make it", a, { extra: commands }),
      [
        { expect: "Approve this command\\?[\\s\\S]*touch made1[\\s\\S]*approve> ", send: "a\r" },
        { expect: "this project[\\s\\S]*always> ", send: "p\r" },
        { expect: "Done\\." },
      ],
      { cwd: a, env },
    );
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.match(out, /always in this project: saved the rule `allow \$ touch`/);
    await Deno.stat(`${a}/made1`);
  } finally {
    await mock.close();
  }
  // The rule lives outside the repository.
  for await (const entry of Deno.readDir(a)) assert.equal(entry.name, "made1");
  // Session 2 in A: not asked.
  mock = oneCommand("touch made2");
  try {
    const r = await runDeftInPty(mockRunArgs(mock, "make it", a, { extra: commands }), [
      { expect: "Done\\." },
    ], { cwd: a, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.doesNotMatch(out, /Approve this/);
    await Deno.stat(`${a}/made2`);
  } finally {
    await mock.close();
  }
  // Session 3 in B: asked again.
  mock = oneCommand("touch made3");
  try {
    const r = await runDeftInPty(mockRunArgs(mock, "make it", b, { extra: commands }), [
      { expect: "Approve this command\\?[\\s\\S]*approve> ", send: "n\r" },
      { expect: "Done\\." },
    ], { cwd: b, env });
    assert.equal(r.failed, null, plain(r.output));
    await assert.rejects(Deno.stat(`${b}/made3`));
  } finally {
    await mock.close();
  }
  // deft approvals in A lists it; remove 1 takes it away.
  const listed = await runDeft(["approvals"], { cwd: a, env });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stdout,
    /^1\. allow {2}\$ touch {2}\(this project: .*project_approvals\.yaml\)$/m,
  );
  const inB = await runDeft(["approvals"], { cwd: b, env });
  assert.equal(inB.stdout, "", "the rule does not apply in another project");
  const removed = await runDeft(["approvals", "remove", "1"], { cwd: a, env });
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stderr, /removed: allow {2}\$ touch/);
  const after = await runDeft(["approvals"], { cwd: a, env });
  assert.equal(after.stdout, "");
  assert.match(after.stderr, /No approval rules here/);
});

Deno.test("rules: a repository's deft.yaml allow rule is ignored with a warning; its deny rule applies at once", async () => {
  await using homeTemp = await tempDir();
  await using repoTemp = await tempDir();
  const home = homeTemp.path;
  const repo = await Deno.realPath(repoTemp.path);
  await Deno.writeTextFile(
    `${repo}/deft.yaml`,
    "approvals:\n  allow: ['$ touch']\n  deny: ['$ rm']\n",
  );
  await Deno.writeTextFile(`${repo}/keep.txt`, "keep");
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "rm keep.txt" }]]),
    chatText("Done."),
  ]);
  try {
    // `never`: nothing is asked, yet the repository's deny refuses the rm.
    const r = await runMocked(mock, "clean up", repo, { cwd: repo, env: { HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /a repository's config may add 'deny' and 'ask' approval rules, never 'allow'/,
    );
    await Deno.stat(`${repo}/keep.txt`);
    const second = JSON.stringify(mock.requests[1].body.messages);
    assert.match(second, /deny rule \(`\$ rm`, set in [^)]*deft\.yaml\) refuses this command/);
    const listed = await runDeft(["approvals"], { cwd: repo, env: { HOME: home } });
    assert.match(listed.stdout, /^1\. deny {3}\$ rm {2}\(this repository's config: /m);
    assert.doesNotMatch(listed.stdout, /allow/);
    const removing = await runDeft(["approvals", "remove", "1"], {
      cwd: repo,
      env: { HOME: home },
    });
    assert.equal(removing.code, 2);
    assert.match(removing.stderr, /which Deft does not edit; remove it from that file/);
  } finally {
    await mock.close();
  }
});

Deno.test("rules: --approval-rules FILE denies by policy in a run and records the rule in --json", async () => {
  await using homeTemp = await tempDir();
  await using repoTemp = await tempDir();
  const home = homeTemp.path;
  const repo = repoTemp.path;
  const policy = `${home}/policy.yaml`;
  await Deno.writeTextFile(policy, "deny:\n  - $ git push\nallow:\n  - $ git status\n");
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "git status && git push --force" }]]),
    chatText("Done."),
  ]);
  try {
    const r = await runMocked(mock, "ship it", repo, {
      cwd: repo,
      env: { HOME: home },
      extra: ["--approval-rules", policy, "--json"],
    });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.stringify(JSON.parse(r.stdout));
    assert.match(summary, /"decided_by":"rule"/);
    assert.match(summary, /"rule":\{"text":"\$ git push","source":"[^"]*policy\.yaml"\}/);
    const bad = await runMocked(mock, "x", repo, {
      cwd: repo,
      env: { HOME: home },
      extra: ["--approval-rules", `${home}/missing.yaml`],
    });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /Cannot read the approval rules file .*missing\.yaml/);
  } finally {
    await mock.close();
  }
});

Deno.test("rules: /status in interactive shows the rules in force with their source", async () => {
  await using homeTemp = await tempDir();
  await using repoTemp = await tempDir();
  const home = homeTemp.path;
  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/.config/deft/config.yaml`,
    "approvals:\n  allow: ['$ git status']\n  deny: ['$ git push']\n",
  );
  const mock = MockLLM.start([chatText("unused")]);
  try {
    const r = await interactiveOnStdin(repoTemp.path, mock, "/status\nexit\n", {
      args: ["--approval", "never"],
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /rules:\n {2}1\. deny {3}\$ git push {2}\(your config: \S+config\.yaml\)\n {2}2\. allow {2}\$ git status/,
    );
    // `deft approvals remove` takes a rule out of the user's config, keeping the rest.
    const removed = await runDeft(["approvals", "remove", "1"], {
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(removed.code, 0, removed.stderr);
    const config = await Deno.readTextFile(`${home}/.config/deft/config.yaml`);
    assert.doesNotMatch(config, /git push/);
    assert.match(config, /git status/);
  } finally {
    await mock.close();
  }
});

Deno.test("rules: a trusted repository's deft.yaml still adds no allow rule", async () => {
  const home = await trustedHome();
  await Deno.writeTextFile(
    `${home}/deft.yaml`,
    "approvals:\n  allow: ['$ rm']\n  ask: ['$ curl']\n",
  );
  const listed = await runDeft(["approvals"], { cwd: home, env: { HOME: home } });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^1\. ask {4}\$ curl {2}\(this repository's config: deft\.yaml\)$/m);
  assert.doesNotMatch(listed.stdout, /\$ rm/);
  assert.match(listed.stderr, /never 'allow': its allow rules \(\$ rm\) are ignored/);
});
