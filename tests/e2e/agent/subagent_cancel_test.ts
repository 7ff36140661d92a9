/**
 * Ctrl-C in `deft interactive` while a `Task` child runs (issue 54): the turn's signal reaches the
 * child, which ends with its processes and worktree; the turn's next `Task` call starts none; the
 * prompt is back long before the child's deadline.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";
import { taskConfigYaml } from "../../helpers/subagent.ts";

const ENTER = "\r";
const CTRL_C = "\x03";
const CTRL_D = "\x04";
// A command line no other test runs, so pgrep finds only this child's.
const SLEEPER = "sleep 413";

// deno-lint-ignore no-explicit-any
function firstUserText(req: any): string {
  // deno-lint-ignore no-explicit-any
  const first = req.body.messages.find((m: any) => m.role === "user");
  return typeof first.content === "string" ? first.content : JSON.stringify(first.content);
}

function sleeping(): boolean {
  return new Deno.Command("pgrep", { args: ["-f", `^${SLEEPER}$`] }).outputSync().success;
}

/** What is left of children at one moment: processes, worktrees, worktree folders. */
function snapshot(repo: string, tmp: string) {
  const worktrees = new Deno.Command("git", { args: ["-C", repo, "worktree", "list"] })
    .outputSync();
  return {
    sleeping: sleeping(),
    worktrees: new TextDecoder().decode(worktrees.stdout).trim().split("\n").length,
    folders: [...Deno.readDirSync(tmp)].filter((e) => e.name.startsWith("deft-subagent-")).length,
  };
}

Deno.test("task (pty): Ctrl-C stops a running child (its command and worktree go) and the turn's next one never starts; the prompt comes back", async () => {
  const repo = await makeBuggyRepo();
  await using homeDir = await tempDir("deft-home-");
  await using tmp = await tempDir("deft-tmp-");
  let afterCancel: ReturnType<typeof snapshot> | undefined;
  let secondStarted = false;
  const mock = MockLLM.start([], (req) => {
    const text = firstUserText(req);
    if (text.includes("CHILD-SECOND")) {
      secondStarted = true;
      return chatToolCalls([["bash", { command: SLEEPER, timeout: 600 }]]);
    }
    if (text.includes("CHILD-HANGS")) {
      // A quick first command, so the console's line for step 1 says the shell is up; then
      // the command that hangs.
      const done = req.body.messages.filter((m: { role: string }) => m.role === "tool").length;
      return done === 0
        ? chatToolCalls([["bash", { command: "true" }]])
        : chatToolCalls([["bash", { command: SLEEPER, timeout: 600 }]]);
    }
    // deno-lint-ignore no-explicit-any
    const users = req.body.messages.filter((m: any) => m.role === "user").length;
    if (users > 1) {
      // The parent's next turn, with Deft still running: what did the Ctrl-C leave?
      afterCancel = snapshot(repo, tmp.path);
      return chatText("PARENT checked");
    }
    // Two children, run one after the other: the second must not start after the Ctrl-C.
    return chatToolCalls([
      ["task", { description: "hang", prompt: "CHILD-HANGS" }],
      ["task", { description: "second", prompt: "CHILD-SECOND" }],
    ]);
  });
  await Deno.mkdir(`${homeDir.path}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${homeDir.path}/.config/deft/config.yaml`,
    // The children's deadline is far beyond the test's patience: only the Ctrl-C can end the
    // child in time.
    taskConfigYaml(mock.url, { deadline: 600 }),
  );
  // Whether the child's command ran before the Ctrl-C (watched while the terminal is driven).
  let sawSleeping = false;
  let driving = true;
  const watch = (async () => {
    while (driving && !sawSleeping) {
      sawSleeping = sleeping();
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  try {
    const run = await runDeftInPty(["interactive", "-w", repo, "--approval", "never"], [
      { expect: "deft> ", send: "PARENT start the child" + ENTER },
      // The child's shell is up after its first step; its next command starts at once.
      { expect: "\\[task hang\\] step 1: bash", send: CTRL_C, delay: 4 },
      // The prompt back within the step's timeout (30 s), far before the deadline (600 s).
      { expect: "interrupted[\\s\\S]*deft> ", send: "PARENT again" + ENTER },
      { expect: "PARENT checked[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], {
      cwd: homeDir.path,
      env: {
        HOME: homeDir.path,
        XDG_CONFIG_HOME: `${homeDir.path}/.config`,
        XDG_STATE_HOME: `${homeDir.path}/state`,
        TMPDIR: tmp.path,
      },
      timeoutSeconds: 30,
    });
    driving = false;
    await watch;
    const out = plain(run.output);
    assert.equal(run.failed, null, out);
    assert.equal(run.code, 0, out);
    assert.ok(sawSleeping, "the child's command was running before the Ctrl-C");
    assert.deepEqual(
      afterCancel,
      { sleeping: false, worktrees: 1, folders: 0 },
      "after the Ctrl-C, with Deft still running: no child command, worktree or folder",
    );
    assert.equal(secondStarted, false, "the turn's next child did not start");
    assert.equal(sleeping(), false);
  } finally {
    driving = false;
    await watch;
    await mock.close();
  }
});
