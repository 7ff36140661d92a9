import assert from "node:assert/strict";
import { ApprovalGate } from "../../../src/gate/approval.ts";
import { commandPrefix, isReadOnlyCommand } from "../../../src/gate/commands.ts";
import { createTools } from "../../../src/tools/registry.ts";
import { RUN_UNASKED, ToolExecutor } from "../../../src/tools/executor.ts";
import { mockRunArgs } from "../../helpers/deft.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("read-only commands: plain readers and git status/diff/log; anything else is asked", () => {
  for (
    const c of [
      "ls",
      "ls -la src",
      "cat a.txt",
      "grep -rn foo src",
      "git status",
      "git diff",
      "git log --oneline | head -5",
      "wc -l *.ts",
    ]
  ) {
    assert.equal(isReadOnlyCommand(c), true, c);
  }
  for (
    const c of [
      "rm -rf build",
      "ls; rm -rf /",
      "ls && rm x",
      "cat x > y",
      "echo $(rm x)",
      "echo `rm x`",
      "cat x | sh",
      "git push",
      "git -c core.pager=evil log",
      "git diff --output=/etc/x",
      "ls\nrm x",
      "FOO=1 ls",
      "",
    ]
  ) {
    assert.equal(isReadOnlyCommand(c), false, JSON.stringify(c));
  }
});

Deno.test("the question spells out control characters, so a command cannot hide on the terminal", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const tools = createTools({ provider: "openai", workspace: dir, settings: {} }, ["bash"]);
  const shown: string[] = [];
  const gate = new ApprovalGate("commands", () => Promise.resolve("n"), (t) => shown.push(t));
  const refused = await gate.check(tools[0], { command: "rm -rf ~\r\x1b[2Kls \u202e" });
  assert.match(String(refused), /denied/);
  assert.match(shown[0], /\$ rm -rf ~\\x0d\\x1b\[2Kls \\u202e/);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(shown[0], /[\r\x1b\u202e]/);
});

Deno.test("readers run unasked only where they cannot act; edits of git's own files are asked", async () => {
  const repo = await makeBuggyRepo();
  const tools = createTools({ provider: "openai", workspace: repo, settings: {} }, [
    "bash",
    "str_replace_based_edit_tool",
  ]);
  const shown: string[] = [];
  const gate = new ApprovalGate("commands", () => Promise.resolve("n"), (t) => shown.push(t), repo);
  const [bash, editor] = tools;
  assert.equal(await gate.check(bash, { command: "git status" }), RUN_UNASKED);
  assert.equal(
    await gate.check(editor, { command: "create", path: `${repo}/a.txt`, file_text: "x" }),
    null,
    "commands mode does not ask before ordinary edits",
  );
  assert.match(
    String(
      await gate.check(editor, {
        command: "str_replace",
        path: `${repo}/.git/config`,
        old_str: "[core]",
        new_str: "[core]\n\tfsmonitor = touch pwned",
      }),
    ),
    /denied this edit/,
    "an edit of git's own config is asked about",
  );
  assert.equal(shown.length, 1);
  await Promise.all(tools.map((t) => t.close()));
});

Deno.test("command prefixes for 'always': the program, or program and subcommand", () => {
  assert.equal(commandPrefix("rm -rf build"), "rm");
  assert.equal(commandPrefix("git push origin main"), "git push");
  assert.equal(commandPrefix("npm test -- --watch"), "npm test");
  assert.equal(commandPrefix("make; rm -rf /"), undefined, "shell syntax: no always");
  assert.equal(commandPrefix("touch a | sh"), undefined);
});

Deno.test("the gate: always covers the prefix only, never a chained command; one question at a time", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const tools = createTools({ provider: "openai", workspace: dir, settings: {} }, ["bash"]);
  const questions: string[] = [];
  const answers = ["a", "y", "n"];
  const gate = new ApprovalGate("commands", () => Promise.resolve(answers.shift() ?? null), (t) => {
    questions.push(t);
  });
  const executor = new ToolExecutor(tools, gate);
  try {
    const call = (command: string, id: string) =>
      executor.executeToolCall({ name: "bash", call_id: id, arguments: { command } });
    assert.equal((await call("touch one", "1")).success, true);
    assert.equal((await call("touch two", "2")).success, true, "always: not asked again");
    assert.equal(questions.length, 1);
    const [chained, other] = await executor.parallelToolCall([
      { name: "bash", call_id: "3", arguments: { command: "touch three; touch four" } },
      { name: "bash", call_id: "4", arguments: { command: "mkdir five" } },
    ]);
    assert.equal(chained.success, true, "asked (answer y) despite the touch prefix");
    assert.equal(other.success, false);
    assert.match(other.error!, /denied this command/);
    assert.equal(questions.length, 3);
    await assert.rejects(Deno.stat(`${dir}/five`));
    await Deno.stat(`${dir}/four`);
  } finally {
    await executor.closeTools();
  }
});

Deno.test("a prompt closed mid-question (Ctrl-D at approve>) is a no: the command does not run", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const tools = createTools({ provider: "openai", workspace: dir, settings: {} }, ["bash"]);
  const gate = new ApprovalGate("commands", () => Promise.resolve(null), () => {});
  const executor = new ToolExecutor(tools, gate);
  try {
    const result = await executor.executeToolCall({
      name: "bash",
      call_id: "1",
      arguments: { command: "touch pwned" },
    });
    assert.equal(result.success, false);
    assert.match(result.error!, /denied this command: no answer/);
    await assert.rejects(Deno.stat(`${dir}/pwned`), Deno.errors.NotFound);
  } finally {
    await executor.closeTools();
  }
});

Deno.test("the question spells out C1 controls (a one-byte CSI), so a command cannot redraw the line", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const tools = createTools({ provider: "openai", workspace: dir, settings: {} }, ["bash"]);
  const shown: string[] = [];
  const gate = new ApprovalGate("commands", () => Promise.resolve("n"), (t) => shown.push(t));
  // 0x9b is CSI on a terminal that takes 8-bit controls: `CSI 2K` erases the line, `CSI 1A` moves up.
  for (const c1 of ["\x9b", "\x85", "\x90", "\x9d", "\x9f"]) {
    shown.length = 0;
    const refused = await gate.check(tools[0], { command: `rm -rf ~ ${c1}2K${c1}1Als` });
    assert.match(String(refused), /denied/);
    assert.equal(shown.length, 1);
    assert.doesNotMatch(shown[0], /[\x80-\x9f]/, `raw ${JSON.stringify(c1)} reached the terminal`);
    assert.match(shown[0], /rm -rf ~/);
    const code = c1.charCodeAt(0).toString(16);
    assert.match(shown[0], new RegExp(`0*${code}`, "i"), "the control is spelled out");
  }
});

// (A merge driver runs only in a merge, which no reader does: it has no case here.)
for (
  const [key, value, attributes] of [
    ["diff.evil.textconv", "touch pwned-diff", "* diff=evil"],
    ["diff.evil.command", "touch pwned-diff", "* diff=evil"],
    ["filter.evil.clean", "touch pwned-filter", "* filter=evil"],
  ]
) {
  Deno.test(`git readers run unasked where ${key} the repository sets cannot act`, async () => {
    const repo = await makeBuggyRepo();
    const tools = createTools({ provider: "openai", workspace: repo, settings: {} }, ["bash"]);
    const shown: string[] = [];
    const gate = new ApprovalGate(
      "commands",
      () => Promise.resolve("n"),
      (t) => shown.push(t),
      repo,
    );
    const executor = new ToolExecutor(tools, gate);
    try {
      await Deno.writeTextFile(`${repo}/calc.py`, "# changed\n", { append: true });
      await Deno.writeTextFile(`${repo}/.gitattributes`, `${attributes}\n`);
      const set = await new Deno.Command("git", { args: ["config", key, value], cwd: repo })
        .output();
      assert.ok(set.success);
      for (const command of ["git diff", "git status", "git log -p"]) {
        await executor.executeToolCall({ name: "bash", call_id: "c", arguments: { command } });
      }
      assert.equal(shown.length, 0, "readers are not asked");
      const planted = [...Deno.readDirSync(repo)].filter((e) => e.name.startsWith("pwned"));
      assert.deepEqual(planted, [], `${key}'s program ran where it could act`);
    } finally {
      await executor.closeTools();
      await Deno.remove(repo, { recursive: true });
    }
  });
}

Deno.test("run --approval all (pty): an edit is shown as a diff and runs only when approved", async () => {
  const repo = await makeBuggyRepo();
  await using hTemp = await tempDir();
  const h = hTemp.path;
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]]),
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "create",
      path: `${repo}/notes.txt`,
      file_text: "hello",
    }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const r = await runDeftInPty(
      mockRunArgs(mock, "fix it", repo, { model: "m", apiKey: null, extra: ["--approval", "all"] }),
      [
        { expect: "Approve this edit\\?[\\s\\S]*-\\s*return a - b[\\s\\S]*\\+\\s*return a \\+ b" },
        { expect: "approve> ", send: "y\r" },
        { expect: "Approve this edit\\?[\\s\\S]*notes\\.txt \\(new file\\)[\\s\\S]*approve> " },
        { send: "no\r" },
      ],
      { cwd: h, env: { HOME: h } },
    );
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(await Deno.readTextFile(`${repo}/calc.py`), /return a \+ b/);
    await assert.rejects(Deno.stat(`${repo}/notes.txt`), "the refused edit never ran");
  } finally {
    await mock.close();
  }
});

Deno.test("a reader is let through unasked only by a tool that confines it; another tool's is asked", async () => {
  const { StandInTool } = await import("../../../src/tools/stand_in.ts");
  const { defaultSandbox } = await import("../../../src/policy/sandbox.ts");
  const ran: unknown[] = [];
  const host = {
    call: (_name: string, args: Record<string, unknown>) => {
      ran.push(args);
      return Promise.resolve({ output: "ran", error: null, error_code: 0 });
    },
    close: () => Promise.resolve(),
  };
  // A command-running tool that would run `ls` as usual, wherever it runs.
  const script = new StandInTool(
    {
      definition: {
        name: "run_script",
        description: "Runs a shell script.",
        parameters: [{
          name: "script",
          type: "string",
          description: "The script.",
          required: true,
        }],
      },
      effects: (args) => ({ kind: "command", command: String(args.script) }),
    },
    { provider: "openai", workspace: "/nonexistent", settings: {} },
    host,
  );
  const shown: string[] = [];
  const gate = new ApprovalGate("commands", () => Promise.resolve("n"), (t) => shown.push(t));
  assert.match(String(await gate.check(script, { script: "ls" })), /denied this command/);
  assert.equal(shown.length, 1, "the reader was asked about");
  // bash confines a reader it is told to run unasked, so there it is not asked (with a sandbox).
  const bash = createTools({ provider: "openai", workspace: "/nonexistent", settings: {} }, [
    "bash",
  ])[0];
  const expected = defaultSandbox().mode === "none" ? /denied this command/ : /^Symbol/;
  assert.match(String(await gate.check(bash, { command: "ls" })), expected);
});
