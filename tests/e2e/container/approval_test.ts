/**
 * Approvals with a container: the gate judges the container's paths as written (the host's files
 * never decide) and asks before every command, readers too, since no read-only sandbox exists
 * in there to run them unasked.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ApprovalGate } from "../../../src/gate/approval.ts";
import { entryOf } from "../../../src/tools/catalog.ts";
import { RUN_UNASKED } from "../../../src/tools/executor.ts";
import { type Host, StandInTool } from "../../../src/tools/stand_in.ts";
import { tempDir } from "../../helpers/temp.ts";

// The gate only asks: a host that would run the call is never reached.
const noHost: Host = {
  call: () => Promise.reject(new Error("not run")),
  close: () => Promise.resolve(),
};
const tool = (name: string) =>
  new StandInTool(
    entryOf(name),
    { provider: "openai", workspace: "/testbed", settings: {} },
    noHost,
  );

/** A gate whose every question is answered "n" and recorded. */
function gate(workspace: string, inContainer: boolean) {
  const questions: string[] = [];
  const g = new ApprovalGate(
    "commands",
    () => Promise.resolve("n"),
    (text) => questions.push(text),
    workspace,
    inContainer,
  );
  return { g, questions };
}

Deno.test("approval in a container: every command is asked, readers too", async () => {
  const { g, questions } = gate("/testbed", true);
  for (const command of ["ls", "git status", "cat calc.py | wc -l", "python3 test_calc.py"]) {
    const verdict = await g.check(tool("bash"), { command });
    assert.notEqual(verdict, RUN_UNASKED, command);
    assert.match(String(verdict), /The user denied this command/, command);
  }
  assert.equal(questions.length, 4);
  assert.ok(questions[0].includes("$ ls"), questions[0]);
  // Edits of ordinary files are not asked in `commands` mode; git's own files are.
  assert.equal(
    await g.check(tool("str_replace_based_edit_tool"), {
      command: "create",
      path: "/testbed/a.py",
      file_text: "x",
    }),
    null,
  );
  const gitEdit = await g.check(tool("str_replace_based_edit_tool"), {
    command: "create",
    path: ".git/hooks/pre-commit",
    file_text: "x",
  });
  assert.match(String(gitEdit), /denied this edit/);
  assert.ok(questions.at(-1)!.includes("+++ .git/hooks/pre-commit"), questions.at(-1));
});

Deno.test("approval in a container: the host's files at the same path decide nothing", async () => {
  // On the host, the workspace's `g` leads into .git; in the container the same path is
  // another file. The container's gate does not look on the host.
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, ".git"));
  await Deno.symlink(".git", join(dir.path, "g"));
  const edit = { command: "create", path: "g/config", file_text: "x" };
  const host = gate(dir.path, false);
  assert.match(String(await host.g.check(tool("str_replace_based_edit_tool"), edit)), /denied/);
  const inside = gate(dir.path, true);
  assert.equal(await inside.g.check(tool("str_replace_based_edit_tool"), edit), null);
  assert.deepEqual(inside.questions, []);
});
