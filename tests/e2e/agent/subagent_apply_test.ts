/**
 * The `Task` tool's `apply` (issue 54): a finished child's patch written into the parent's tree
 * through the parent's own editor, so checkpoints and `/undo` see it; refused, changing nothing,
 * when the parent's file moved on or the editor cannot write a change.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM, type MockRequest } from "../../helpers/mock_llm.ts";
import { BUGGY, git, makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The first user message's text and root, and the tool results so far, of one request. */
function conversation(req: MockRequest) {
  const messages: Json[] = req.body.messages;
  const first = messages.find((m) => m.role === "user");
  const text = typeof first.content === "string" ? first.content : JSON.stringify(first.content);
  const root = /\[Project root path\]:\n(.*)\n/.exec(text)?.[1] ?? "";
  const results: string[] = messages.filter((m) => m.role === "tool").map((m) =>
    typeof m.content === "string" ? m.content : JSON.stringify(m.content)
  );
  return { text, root, results };
}

/** The patch id a `Task` result names. */
function patchId(result: string): string {
  const id = /^patch (\S+) \(/m.exec(result)?.[1];
  assert.ok(id, `no patch id in: ${result}`);
  return id;
}

interface Home {
  path: string;
  tmp: string;
  env: Record<string, string>;
}

/** A home whose trusted user config turns the `task` tool on, and a temp folder for Deft. */
async function home(url: string, stack: AsyncDisposableStack): Promise<Home> {
  const dir = stack.use(await tempDir("deft-home-"));
  const tmp = stack.use(await tempDir("deft-tmp-"));
  await Deno.mkdir(`${dir.path}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${dir.path}/.config/deft/config.yaml`,
    [
      "model_providers:",
      `  mine: { provider: openai_compatible, base_url: ${url}/v1, api_key: k }`,
      "models:",
      "  main: { model_provider: mine, model: mock-model, parallel_tool_calls: true }",
      "agents:",
      "  deft_agent:",
      "    model: main",
      "    max_steps: 8",
      "    tools: [bash, str_replace_based_edit_tool, task_done, task]",
      "subagents: { deadline_seconds: 120 }",
      "",
    ].join("\n"),
  );
  return {
    path: dir.path,
    tmp: tmp.path,
    env: {
      HOME: dir.path,
      XDG_CONFIG_HOME: `${dir.path}/.config`,
      XDG_STATE_HOME: `${dir.path}/state`,
      TMPDIR: tmp.path,
    },
  };
}

/** No worktree, branch or worktree folder is left. */
async function leftovers(repo: string, tmp: string): Promise<void> {
  assert.equal((await git(repo, "worktree", "list")).split("\n").length, 1, "no worktree is left");
  assert.equal((await git(repo, "branch", "--list")).split("\n").length, 1, "no branch is left");
  const left = [...Deno.readDirSync(tmp)].filter((e) => e.name.startsWith("deft-"));
  assert.deepEqual(left, [], "no worktree or scratch folder is left");
}

/** The two children: ONE fixes calc.py with the editor, TWO writes two.txt with the shell. */
function child(req: MockRequest) {
  const c = conversation(req);
  const one = c.text.includes("CHILD-ONE");
  if (c.results.length === 0) {
    return one
      ? chatToolCalls([["str_replace_based_edit_tool", {
        command: "str_replace",
        path: `${c.root}/calc.py`,
        old_str: "a - b",
        new_str: "a + b",
      }]])
      : chatToolCalls([["bash", { command: `echo two > ${c.root}/two.txt` }]]);
  }
  return chatText(one ? "CHILD ONE fixed add" : "CHILD TWO wrote two.txt");
}

Deno.test("task apply: two children; the parent applies one and drops the other; checkpoints and /undo see the edit", async () => {
  await using stack = new AsyncDisposableStack();
  const repo = await makeBuggyRepo();
  let atAnswer: { calc: string; two: boolean } | undefined;
  const applied: string[] = [];
  const mock = MockLLM.start([], (req) => {
    const c = conversation(req);
    if (!c.text.includes("PARENT")) return child(req);
    if (c.results.length === 0) {
      return chatToolCalls([
        ["task", { description: "one", prompt: "CHILD-ONE fix calc.py" }],
        ["task", { description: "two", prompt: "CHILD-TWO write two.txt" }],
      ]);
    }
    if (c.results.length === 2) {
      const one = c.results.find((r) => r.includes("CHILD ONE fixed add"))!;
      return chatToolCalls([["task", { apply: patchId(one) }]]);
    }
    applied.push(c.results[2]);
    atAnswer = {
      calc: Deno.readTextFileSync(`${repo}/calc.py`),
      two: (() => {
        try {
          Deno.statSync(`${repo}/two.txt`);
          return true;
        } catch {
          return false;
        }
      })(),
    };
    return chatText("parent done");
  });
  stack.defer(() => mock.close());
  const h = await home(mock.url, stack);
  const ran = await runDeft(["interactive", "-w", repo, "--approval", "never"], {
    cwd: h.path,
    env: h.env,
    stdin: "PARENT split the work\n/undo\n",
  });
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(applied[0] ?? "", /patch \S+ applied to your tree \(1 file\(s\)\)/, ran.stderr);
  assert.match(applied[0], /^applied: calc\.py$/m);
  assert.deepEqual(
    atAnswer,
    { calc: BUGGY.replace("a - b", "a + b"), two: false },
    "after the apply: child one's fix is in the parent's tree, child two's file is not",
  );
  // /undo took the applied edit back, as an edit of the parent's own editor.
  assert.match(ran.stderr, /reverted an edit of \S*calc\.py/);
  assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY);
  await assert.rejects(Deno.stat(`${repo}/two.txt`));

  // The turn's checkpoint holds the applied file.
  const listed = await runDeft(["checkpoints", "-w", repo, "--json"], { cwd: h.path, env: h.env });
  assert.equal(listed.code, 0, listed.stderr);
  const { checkpoints } = JSON.parse(listed.stdout);
  assert.deepEqual(checkpoints.map((c: Json) => [c.turn, c.kind, c.files_changed]), [
    [0, "start", 0],
    [1, "turn", 1],
  ]);
  await leftovers(repo, h.tmp);
});

Deno.test("task apply: a parent file that moved on, or a change the editor cannot write, is refused and nothing changes", async () => {
  await using stack = new AsyncDisposableStack();
  const repo = await makeBuggyRepo();
  await Deno.writeTextFile(`${repo}/gone.txt`, "to be deleted\n");
  await git(repo, "add", "gone.txt");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "gone");
  const answers: string[] = [];
  const mock = MockLLM.start([], (req) => {
    const c = conversation(req);
    if (!c.text.includes("PARENT")) {
      if (c.results.length > 0) return chatText("CHILD done");
      return chatToolCalls([["bash", {
        command: `cd ${c.root} && sed -i 's/a - b/a + b/' calc.py && echo new > new.txt && ` +
          "rm gone.txt && ln -s /etc/hostname evil",
      }]]);
    }
    const step = c.results.length;
    if (step === 0) return chatToolCalls([["task", { description: "mixed", prompt: "CHILD go" }]]);
    const id = patchId(c.results[0]);
    if (step === 1) return chatToolCalls([["task", { apply: id }]]);
    if (step === 2 || step === 4) answers.push(c.results.at(-1)!);
    if (step === 2) {
      // The parent's own edit of the same line, then the part the editor can write.
      return chatToolCalls([["str_replace_based_edit_tool", {
        command: "str_replace",
        path: `${repo}/calc.py`,
        old_str: "a - b",
        new_str: "b + a",
      }]]);
    }
    if (step === 3) {
      return chatToolCalls([["task", { apply: id, files: ["calc.py", "new.txt"] }]]);
    }
    return chatText("parent done");
  });
  stack.defer(() => mock.close());
  const h = await home(mock.url, stack);
  const ran = await runDeft(["run", "PARENT", "-w", repo, "--approval", "never"], {
    cwd: h.path,
    env: h.env,
  });
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(
    answers[0],
    /was not applied: your file editor cannot .*delete a file \(gone\.txt\)/,
  );
  assert.match(answers[0], /create a symbolic link \(evil\)/);
  assert.match(answers[0], /Nothing was changed/);
  assert.match(answers[0], /"files": \["calc\.py","new\.txt"\]/);
  assert.match(answers[1], /its base no longer matches your tree/);
  assert.match(answers[1], /calc\.py/);
  // Nothing of the patch reached the tree: the parent's own edit only, gone.txt still there.
  assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY.replace("a - b", "b + a"));
  await assert.rejects(Deno.stat(`${repo}/new.txt`));
  assert.equal(await Deno.readTextFile(`${repo}/gone.txt`), "to be deleted\n");
  await assert.rejects(Deno.lstat(`${repo}/evil`));
  await leftovers(repo, h.tmp);
});

Deno.test("task apply: a conversation continued in a new run applies the patch an earlier run's child left", async () => {
  await using stack = new AsyncDisposableStack();
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([], (req) => {
    const c = conversation(req);
    if (!c.text.includes("PARENT")) return child(req);
    const messages: Json[] = req.body.messages;
    const last = messages.at(-1);
    if (last.role === "user" && JSON.stringify(last.content).includes("APPLY-NOW")) {
      const one = c.results.find((r) => r.includes("CHILD ONE fixed add"))!;
      return chatToolCalls([["task", { apply: patchId(one) }]]);
    }
    if (c.results.length === 0) {
      return chatToolCalls([["task", { description: "one", prompt: "CHILD-ONE fix calc.py" }]]);
    }
    return chatText("parent done");
  });
  stack.defer(() => mock.close());
  const h = await home(mock.url, stack);
  const first = await runDeft(["run", "PARENT", "-w", repo, "--approval", "never"], {
    cwd: h.path,
    env: h.env,
  });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY, "the first run applied nothing");
  const again = await runDeft(
    ["run", "APPLY-NOW", "--continue", "-w", repo, "--approval", "never"],
    { cwd: h.path, env: h.env },
  );
  assert.equal(again.code, 0, again.stderr);
  assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY.replace("a - b", "a + b"));
  await leftovers(repo, h.tmp);
});
