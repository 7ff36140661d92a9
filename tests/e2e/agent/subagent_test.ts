/**
 * The `task` tool (issue 54): a child agent in its own git worktree. Parent and children talk to
 * one mock model, which tells them apart by their task text: the parent's names PARENT, each
 * child's prompt names what it is to do (tests/helpers/subagent.ts).
 */
import assert from "node:assert/strict";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { BUGGY, git, makeBuggyRepo } from "../../helpers/repo.ts";
import {
  conversation,
  leftovers,
  parent,
  withTaskRun,
  writeTaskHome,
} from "../../helpers/subagent.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("task: a child edits in its own worktree; the parent's tree is untouched, the patch returned", async () => {
  const repo = await makeBuggyRepo();
  await withTaskRun(
    repo,
    [["task", { description: "fix add", prompt: "CHILD-EDIT fix calc.py" }]],
    (_req, c) => {
      if (c.results.length === 0) {
        return chatToolCalls([["str_replace_based_edit_tool", {
          command: "str_replace",
          path: `${c.root}/calc.py`,
          old_str: "a - b",
          new_str: "a + b",
        }]]);
      }
      if (c.results.length === 1) {
        return chatToolCalls([["bash", { command: `echo new > ${c.root}/added.txt` }]]);
      }
      return chatText("CHILD ANSWER: fixed");
    },
    {},
    async (ran) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.taskResults.length, 1);
      const result = ran.taskResults[0];
      assert.match(result, /CHILD ANSWER: fixed/);
      assert.match(result, /calc\.py \+1 -1/);
      assert.match(result, /added\.txt \+1 -0/);
      assert.match(result, /^\+ {4}return a \+ b$/m, "the patch is in the result");
      assert.equal(
        await Deno.readTextFile(`${repo}/calc.py`),
        BUGGY,
        "the parent's file is as it was",
      );
      await assert.rejects(Deno.stat(`${repo}/added.txt`));
      assert.equal(await git(repo, "status", "--porcelain"), "");
      await leftovers(repo, ran.tmp);
    },
  );
});

Deno.test("task: a child that hangs is stopped at its deadline and the parent is told", async () => {
  const repo = await makeBuggyRepo();
  await withTaskRun(
    repo,
    [["task", { description: "hang", prompt: "CHILD-HANG" }]],
    () => chatToolCalls([["bash", { command: "sleep 120", timeout: 300 }]]),
    { deadline: 3 },
    async (ran) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.taskResults[0], /stopped at its deadline of 3 s/);
      assert.ok(ran.seconds < 60, `the parent went on after the deadline (${ran.seconds} s)`);
      await leftovers(repo, ran.tmp);
    },
  );
});

Deno.test("task: a child cannot write the parent's tree by its absolute path", async () => {
  const repo = await makeBuggyRepo();
  await withTaskRun(
    repo,
    [["task", { description: "escape", prompt: "CHILD-ESCAPE" }]],
    (_req, c) => {
      if (c.results.length === 0) {
        return chatToolCalls([["bash", {
          command: `echo pwned > ${repo}/calc.py; touch ${repo}/x`,
        }]]);
      }
      if (c.results.length === 1) {
        return chatToolCalls([["str_replace_based_edit_tool", {
          command: "create",
          path: `${repo}/evil.txt`,
          file_text: "pwned\n",
        }]]);
      }
      return chatText("CHILD tried");
    },
    {},
    async (ran, mock) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.taskResults[0], /CHILD tried/);
      assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY);
      await assert.rejects(Deno.stat(`${repo}/x`));
      await assert.rejects(Deno.stat(`${repo}/evil.txt`));
      const sent: string[] = mock.requests.flatMap((r) => conversation(r).results);
      // The sandbox shows the child no writable parent tree; the editor keeps to its workspace.
      assert.ok(
        sent.some((t) => /calc\.py: (No such file or directory|Read-only file system)/.test(t)),
        sent.join("\n---\n"),
      );
      assert.ok(sent.some((t) => /evil\.txt leaves the workspace/.test(t)), sent.join("\n---\n"));
      await leftovers(repo, ran.tmp);
    },
  );
});

Deno.test("task: tools that do not exist are refused, naming the valid ones", async () => {
  const repo = await makeBuggyRepo();
  await withTaskRun(
    repo,
    [["task", { description: "odd tools", prompt: "CHILD-NEVER", tools: ["bash", "frobnicate"] }]],
    () => chatText("a child ran"),
    {},
    async (ran, mock) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.taskResults[0], /no tool named 'frobnicate'/);
      assert.match(
        ran.taskResults[0],
        /Valid tool names: bash, str_replace_based_edit_tool, task_done\./,
      );
      assert.ok(!mock.requests.some((r) => conversation(r).text.includes("CHILD-NEVER")));
      await leftovers(repo, ran.tmp);
    },
  );
});

async function twoChildren(extra: string[]): Promise<string[]> {
  const repo = await makeBuggyRepo();
  const order: string[] = [];
  await withTaskRun(
    repo,
    [
      ["task", { description: "one", prompt: "CHILD-ONE write one.txt" }],
      ["task", { description: "two", prompt: "CHILD-TWO write two.txt" }],
    ],
    (_req, c) => {
      const name = c.text.includes("CHILD-ONE") ? "one" : "two";
      order.push(`${name}${c.results.length}`);
      if (c.results.length === 0) {
        // Slow enough that the other child's first request comes in meanwhile.
        return {
          ...chatToolCalls([["bash", { command: `echo ${name} > ${c.root}/${name}.txt` }]]),
          delayMs: 4000,
        };
      }
      return chatText(`CHILD ${name} done`);
    },
    { parallel: true, extra },
    async (ran) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.taskResults.length, 2);
      assert.match(ran.taskResults[0], /one\.txt \+1 -0/);
      assert.doesNotMatch(ran.taskResults[0], /two\.txt/);
      assert.match(ran.taskResults[1], /two\.txt \+1 -0/);
      assert.doesNotMatch(ran.taskResults[1], /one\.txt/);
      await assert.rejects(Deno.stat(`${repo}/one.txt`));
      await leftovers(repo, ran.tmp);
    },
  );
  return order;
}

Deno.test("task: two children run at once, each in its own worktree", async () => {
  const order = await twoChildren([]);
  assert.deepEqual(order.slice(0, 2).sort(), ["one0", "two0"], `ran one after the other: ${order}`);
});

Deno.test("task: --parallel-subagents 1 runs them one after the other", async () => {
  const order = await twoChildren(["--parallel-subagents", "1"]);
  assert.deepEqual(order, ["one0", "one1", "two0", "two1"]);
});

Deno.test("task: a child's rm -rf of its worktree leaves the parent working", async () => {
  const repo = await makeBuggyRepo();
  await withTaskRun(
    repo,
    [["task", { description: "wreck", prompt: "CHILD-WRECK" }]],
    (_req, c) =>
      c.results.length === 0
        ? chatToolCalls([["bash", { command: `cd / && rm -rf ${c.root}/* ${c.root}/.git` }]])
        : chatText("CHILD wrecked"),
    {},
    async (ran) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.taskResults[0], /CHILD wrecked/);
      assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY);
      assert.equal(await git(repo, "status", "--porcelain"), "");
      await leftovers(repo, ran.tmp);
    },
  );
});

Deno.test("task: SubagentStart adds context, SubagentStop keeps the child going once", async () => {
  const repo = await makeBuggyRepo();
  const hooks = [
    "hooks:",
    "  SubagentStart:",
    "    - matcher: write",
    "      hooks:",
    '        - { type: command, command: "bash $HOME_DIR/start.sh", sandbox: none }',
    "  SubagentStop:",
    "    - hooks:",
    '        - { type: command, command: "bash $HOME_DIR/stop.sh", sandbox: none }',
  ].join("\n");
  const scripts = {
    "start.sh": 'cat >> "$HOME/start.jsonl"; echo >> "$HOME/start.jsonl"\n' +
      `echo '{"hookSpecificOutput": {"hookEventName": "SubagentStart", ` +
      `"additionalContext": "HOOK-CONTEXT-42"}}'\n`,
    "stop.sh": [
      'input=$(cat); echo "$input" >> "$HOME/stop.jsonl"',
      `if echo "$input" | grep -q '"stop_hook_active":true'; then exit 0; fi`,
      `echo '{"decision": "block", "reason": "KEEP-GOING-7"}'`,
      "",
    ].join("\n"),
  };
  await withTaskRun(
    repo,
    [["task", { description: "hooked", prompt: "CHILD-HOOKED" }]],
    (req) => {
      const kept = JSON.stringify(req.body.messages).includes("KEEP-GOING-7");
      return chatText(kept ? "CHILD second answer" : "CHILD first answer");
    },
    { hooks, scripts },
    async (ran, mock) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.taskResults[0], /final answer:\nCHILD second answer/);
      const child = mock.requests.map(conversation).find((c) => c.text.includes("CHILD-HOOKED"));
      assert.match(
        child?.text ?? "",
        /HOOK-CONTEXT-42/,
        "the start hook's context reached the child",
      );
      const lines = async (name: string) =>
        (await Deno.readTextFile(`${ran.home}/${name}`)).split("\n").filter((l) => l.trim())
          .map((l) => JSON.parse(l));
      const [start] = await lines("start.jsonl");
      assert.equal(start.hook_event_name, "SubagentStart");
      assert.equal(start.agent_type, "write");
      const stops = await lines("stop.jsonl");
      assert.deepEqual(stops.map((s) => s.stop_hook_active), [false, true]);
      assert.equal(stops[0].agent_id, start.agent_id);
      assert.match(ran.taskResults[0], new RegExp(`child session: ${start.agent_id}`));
      await Deno.stat(stops[0].agent_transcript_path);
      await leftovers(repo, ran.tmp);
    },
  );
});

Deno.test("task: a reader child sees the parent's tree and cannot change it", async () => {
  const repo = await makeBuggyRepo();
  await Deno.writeTextFile(`${repo}/notes.txt`, "UNCOMMITTED-NOTE\n");
  await withTaskRun(
    repo,
    [["task", { description: "look", prompt: "CHILD-READ", mode: "read" }]],
    (_req, c) => {
      if (c.results.length === 0) {
        return chatToolCalls([["bash", { command: `cat notes.txt; echo x > ${c.root}/calc.py` }]]);
      }
      return chatText(
        `CHILD read: ${c.results[0].includes("UNCOMMITTED-NOTE") ? "saw" : "blind"}`,
      );
    },
    {},
    async (ran, mock) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.taskResults[0], /CHILD read: saw/);
      const sent: string[] = mock.requests.flatMap((r) => conversation(r).results);
      assert.ok(sent.some((t) => /calc\.py: Read-only file system/.test(t)), sent.join("\n---\n"));
      assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY);
      await leftovers(repo, ran.tmp);
    },
  );
});

Deno.test("task: the child's worktree holds the parent's uncommitted changes; its patch only its own", async () => {
  const repo = await makeBuggyRepo();
  await Deno.writeTextFile(`${repo}/notes.txt`, "UNCOMMITTED-NOTE\n");
  await Deno.writeTextFile(`${repo}/calc.py`, `${BUGGY}# parent's edit\n`);
  await withTaskRun(
    repo,
    [["task", { description: "extend", prompt: "CHILD-CARRY" }]],
    (_req, c) => {
      if (c.results.length === 0) {
        return chatToolCalls([["bash", {
          command: `cd ${c.root} && cat notes.txt calc.py && echo "# child's edit" >> calc.py`,
        }]]);
      }
      return chatText(
        `CHILD saw: ${c.results[0].includes("UNCOMMITTED-NOTE")} ${
          c.results[0].includes("parent's edit")
        }`,
      );
    },
    {},
    async (ran) => {
      assert.equal(ran.code, 0, ran.stderr);
      const result = ran.taskResults[0];
      assert.match(result, /CHILD saw: true true/);
      assert.match(result, /uncommitted changes applied/);
      assert.match(result, /calc\.py \+1 -0/);
      assert.match(result, /^\+# child's edit$/m);
      assert.doesNotMatch(result, /^\+# parent's edit$/m);
      assert.doesNotMatch(result, /notes\.txt \+/);
      await leftovers(repo, ran.tmp);
    },
  );
});

Deno.test("task: SIGTERM of Deft while a child runs leaves no worktree, folder or process", async () => {
  const repo = await makeBuggyRepo();
  const script = parent([["task", { description: "long", prompt: "CHILD-LONG" }]]);
  const mock = MockLLM.start([], (req) => {
    const mine = script(req);
    if (mine) return mine;
    return chatToolCalls([["bash", { command: "sleep 317", timeout: 600 }]]);
  });
  await using homeDir = await tempDir("deft-home-");
  await using tmp = await tempDir("deft-tmp-");
  await writeTaskHome(homeDir.path, mock.url, 600);
  const deft = new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, "run", "PARENT", "-w", repo],
    env: {
      NO_COLOR: "1",
      DENO_DIR: denoDir(),
      HOME: homeDir.path,
      XDG_CONFIG_HOME: `${homeDir.path}/.config`,
      XDG_STATE_HOME: `${homeDir.path}/state`,
      TMPDIR: tmp.path,
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    // Wait for the child's command itself to run.
    const sleeping = async () =>
      (await new Deno.Command("pgrep", { args: ["-f", "^sleep 317$"] }).output()).success;
    const started = performance.now();
    while (!(await sleeping())) {
      assert.ok(performance.now() - started < 60_000, "the child's command never started");
      await new Promise((r) => setTimeout(r, 200));
    }
    deft.kill("SIGTERM");
    const ended = performance.now();
    const status = await deft.status;
    assert.ok(performance.now() - ended < 30_000, "Deft took too long to end");
    assert.equal(
      status.code,
      143,
      new TextDecoder().decode((await deft.stderr.getReader().read()).value),
    );
    assert.equal(await sleeping(), false, "the child's command is gone");
    await leftovers(repo, tmp.path);
  } finally {
    try {
      deft.kill("SIGKILL");
    } catch { /* ended */ }
    await deft.stderr.cancel().catch(() => {});
    await mock.close();
  }
});

Deno.test("task: outside a git repository a writer child is refused, saying what to do", async () => {
  await using plain = await tempDir("deft-plain-");
  await Deno.writeTextFile(`${plain.path}/a.txt`, "a\n");
  await withTaskRun(
    plain.path,
    [["task", { description: "w", prompt: "CHILD-NOREPO" }]],
    () => chatText("a child ran"),
    {},
    (ran, mock) => {
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.taskResults[0], /is not inside a git repository.*use mode "read"/);
      assert.ok(!mock.requests.some((r) => conversation(r).text.includes("CHILD-NOREPO")));
      assert.deepEqual([...Deno.readDirSync(ran.tmp)].map((e) => e.name), []);
    },
  );
});
