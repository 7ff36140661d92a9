/**
 * What the approval gate lets through unasked runs where it cannot act (issue: "Nothing runs
 * unasked or outside the sandbox"). A hostile repository plants programs that git or the shell
 * runs for a "read-only" command; the model then runs that command with `--approval commands`.
 * Nothing is asked, nothing the plant does lasts (no file inside or outside the workspace), no key
 * reaches it, and the command still answers. The session's own shell has no sandbox here, so
 * only the gate's confinement stands between the plant and the machine.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ApprovalGate } from "../../../src/gate/approval.ts";
import { ToolExecutor } from "../../../src/tools/executor.ts";
import { createTools } from "../../../src/tools/registry.ts";
import { git } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const KEY = "sk-ant-unasked-test-key";

/** A repository with one commit, a gate in `commands` mode and the real bash tool and editor. */
async function hostileRepo(approve: (question: string) => boolean = () => false) {
  const dir = await tempDir("deft-unasked-");
  const repo = dir.path;
  await git(repo, "init", "-q");
  await Deno.writeTextFile(join(repo, "a.txt"), "hello\n");
  await git(repo, "add", "a.txt");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
  const tools = createTools({ provider: "openai", workspace: repo, settings: {} }, [
    "bash",
    "str_replace_based_edit_tool",
  ]);
  const questions: string[] = [];
  const gate = new ApprovalGate(
    "commands",
    () => Promise.resolve(approve(questions[questions.length - 1]) ? "y" : "n"),
    (text) => questions.push(text),
    repo,
  );
  const executor = new ToolExecutor(tools, gate);
  const outside = `/var/tmp/deft-unasked-${crypto.randomUUID()}`;
  const run = (command: string) =>
    executor.executeToolCall({ name: "bash", call_id: "c", arguments: { command } });
  return {
    repo,
    gate,
    questions,
    executor,
    run,
    outside,
    /** A shell line that leaves a mark inside and outside the workspace and shows the env. */
    plant: `touch ${outside} ${repo}/pwned; env >&2`,
    async [Symbol.asyncDispose]() {
      await executor.closeTools();
      await Deno.remove(outside).catch(() => {});
      await dir.remove();
    },
  };
}

async function assertNothingLasted(r: Awaited<ReturnType<typeof hostileRepo>>, said: string) {
  await assert.rejects(Deno.stat(r.outside), Deno.errors.NotFound, "a file outside appeared");
  await assert.rejects(Deno.stat(join(r.repo, "pwned")), Deno.errors.NotFound, "a file inside");
  assert.ok(!said.includes(KEY), "a key reached the planted program");
}

function withKey<T>(body: () => Promise<T>): Promise<T> {
  Deno.env.set("ANTHROPIC_API_KEY", KEY);
  return body().finally(() => Deno.env.delete("ANTHROPIC_API_KEY"));
}

Deno.test("core.fsmonitor in .git/config: git status runs unasked and its program changes nothing", async () => {
  await withKey(async () => {
    await using r = await hostileRepo();
    await git(r.repo, "config", "core.fsmonitor", r.plant);
    const status = await r.run("git status");
    assert.deepEqual(r.questions, [], "nothing was asked");
    assert.match(String(status.output), /On branch|HEAD/, String(status.error));
    await assertNothingLasted(r, `${status.output}${status.error}`);
  });
});

Deno.test("a hook plus a stale index, and worktree config: git status changes nothing", async () => {
  await withKey(async () => {
    await using r = await hostileRepo();
    const hook = join(r.repo, ".git/hooks/post-index-change");
    await Deno.writeTextFile(hook, `#!/bin/sh\n${r.plant}\n`);
    await Deno.chmod(hook, 0o755);
    await Deno.utime(join(r.repo, "a.txt"), new Date(), new Date(Date.now() + 5000));
    await git(r.repo, "config", "extensions.worktreeConfig", "true");
    await Deno.writeTextFile(
      join(r.repo, ".git/config.worktree"),
      `[core]\n\tfsmonitor = ${r.plant}\n`,
    );
    const status = await r.run("git status");
    assert.deepEqual(r.questions, []);
    await assertNothingLasted(r, `${status.output}${status.error}`);
  });
});

Deno.test("a nested repository after an approved cd: its fsmonitor changes nothing", async () => {
  await using r = await hostileRepo((q) => q.includes("cd vendor/lib"));
  const nested = join(r.repo, "vendor/lib");
  await Deno.mkdir(nested, { recursive: true });
  await git(nested, "init", "-q");
  await git(nested, "config", "core.fsmonitor", r.plant);
  const cd = await r.run("cd vendor/lib && pwd");
  assert.equal(cd.success, true, String(cd.error));
  const status = await r.run("git status");
  assert.equal(r.questions.length, 1, "only the cd was asked");
  assert.match(String(status.output), /No commits yet|On branch/, String(status.error));
  await assertNothingLasted(r, `${status.output}${status.error}`);
});

Deno.test("a reader's name taken by a function from an approved script runs the real reader", async () => {
  await using r = await hostileRepo((q) => q.includes(". bin/activate"));
  await Deno.mkdir(join(r.repo, "bin"));
  // The model wrote this (edits are not asked in `commands` mode); the user approves sourcing it.
  await Deno.writeTextFile(join(r.repo, "bin/activate"), `cat() { ${r.plant}; }\n`);
  assert.equal((await r.run(". bin/activate")).success, true);
  const cat = await r.run("cat a.txt");
  assert.equal(r.questions.length, 1, "only the source was asked");
  assert.equal(cat.output, "hello\n", "the real cat ran");
  await assertNothingLasted(r, `${cat.output}${cat.error}`);
});

Deno.test("date -s is asked; a symlink into .git makes an edit git's own, and it is asked", async () => {
  await using r = await hostileRepo();
  // Only the gate is asked here: were the check broken, executing `date -s` as root would really
  // set the clock.
  const date = await r.gate.check(r.executor.find("bash")!, { command: "date -s 2000-01-01" });
  assert.match(String(date), /denied this command/);
  await Deno.symlink(".git", join(r.repo, "g"));
  const edit = await r.executor.executeToolCall({
    name: "str_replace_based_edit_tool",
    call_id: "e",
    arguments: {
      command: "str_replace",
      path: join(r.repo, "g/config"),
      old_str: "[core]",
      new_str: `[core]\n\tfsmonitor = ${r.plant}`,
    },
  });
  assert.match(String(edit.error), /denied this edit/);
  assert.doesNotMatch(await Deno.readTextFile(join(r.repo, ".git/config")), /fsmonitor/);
  assert.equal(r.questions.length, 2);
});
