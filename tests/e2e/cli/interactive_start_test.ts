/**
 * `deft interactive`'s start work (the baseline: the workspace as the session found it) runs after
 * the prompt is drawn, in the background. What the user types the moment the prompt appears must
 * still act only after it: `/diff` then shows what the turn or the `!command` did, and `/rewind 0`
 * gives back the files as they were. An error of that work is told at the prompt.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { BUGGY, git, makeBuggyRepo } from "../../helpers/repo.ts";
import { sessionEnv as home } from "../../helpers/mock_session.ts";

const ENTER = "\r";

/**
 * Committed files enough that recording the baseline takes a while (git hashes each again in the
 * baseline's own index before it lists the new files): a call that did not wait for it would act
 * before the baseline looked at the work tree.
 */
async function slowToRecord(repo: string): Promise<void> {
  await Deno.mkdir(`${repo}/notes`);
  for (let i = 0; i < 6000; i++) {
    await Deno.writeTextFile(`${repo}/notes/n${i}.txt`, `note ${i}\n`.repeat(20));
  }
  await git(repo, "add", "notes");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "notes");
}

Deno.test("interactive start (pty): a prompt typed the moment the prompt appears waits for the start state; /diff shows the turn, /rewind 0 restores", async () => {
  const repo = await makeBuggyRepo();
  await slowToRecord(repo);
  const env = await home();
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: "sed -i 's/a - b/a + b/' calc.py && echo made > made.txt",
    }]]),
    chatText("Fixed it."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "fix calc" + ENTER, delay: 0 },
      { expect: "Fixed it\\.[\\s\\S]*deft> ", send: "/diff" + ENTER },
      { expect: "made\\.txt[\\s\\S]*deft> ", send: "/rewind 0 files" + ENTER },
      { expect: "rewound the files to checkpoint 0[\\s\\S]*deft> ", send: "/exit" + ENTER },
    ], {
      args: ["--approval", "never"],
      env,
    });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    const diff = out.slice(out.lastIndexOf("/diff"), out.indexOf("/rewind 0 files"));
    assert.match(diff, /^-\s+return a - b$/m, "the patch is measured from before the turn");
    assert.match(diff, /^\+\s+return a \+ b$/m);
    assert.match(diff, /^\+made$/m);
    assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY);
    assert.equal(await Deno.stat(`${repo}/made.txt`).then(() => true, () => false), false);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive start (pty): a !command typed the moment the prompt appears runs after the start state is recorded", async () => {
  const repo = await makeBuggyRepo();
  await slowToRecord(repo);
  const env = await home();
  const mock = MockLLM.start([]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "!echo typed-at-once > early.txt" + ENTER, delay: 0 },
      { expect: "exit code 0[\\s\\S]*deft> ", send: "/diff" + ENTER },
      { expect: "early\\.txt[\\s\\S]*deft> ", send: "/exit" + ENTER },
    ], {
      args: ["--approval", "never"],
      env,
      timeoutSeconds: 60,
    });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.match(out.slice(out.lastIndexOf("/diff")), /^\+typed-at-once$/m);
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive start (pty): a failure of the background start work is told at the prompt", async () => {
  const repo = await makeBuggyRepo();
  // HEAD's tree gone from the object store: the baseline cannot be read from HEAD and fails; the
  // session goes on, its patch measured against HEAD.
  const tree = await git(repo, "rev-parse", "HEAD^{tree}");
  await Deno.remove(`${repo}/.git/objects/${tree.slice(0, 2)}/${tree.slice(2)}`);
  const env = await home();
  const mock = MockLLM.start([]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> " },
      { expect: "could not record the state of [\\s\\S]*deft> ", send: "/exit" + ENTER },
    ], {
      args: ["--approval", "never"],
      env,
      timeoutSeconds: 60,
    });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(out, /the patch and files changed will be measured against HEAD/);
  } finally {
    await mock.close();
  }
});
