/**
 * `deft run --approval commands --json` at a terminal: each call's approval decision and who made
 * it is in the trajectory, beside the call's result, and in the summary's `approvals`; a replay
 * of that trajectory repeats the decisions and matches it.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { mockRunArgs } from "../../helpers/deft.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("run --approval commands --json: the trajectory and the summary say who decided each call", async () => {
  await using wsTemp = await tempDir("deft-decisions-");
  await using homeTemp = await tempDir("deft-home-");
  const ws = wsTemp.path;
  const home = homeTemp.path;
  await Deno.writeTextFile(`${ws}/notes.txt`, "hello\n");
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `cat ${ws}/notes.txt` }]]),
    chatToolCalls([["bash", { command: `touch ${ws}/yes.txt` }]]),
    chatToolCalls([["bash", { command: `touch ${ws}/no.txt` }]]),
    chatToolCalls([["bash", { command: `mkdir ${ws}/one` }]]),
    chatToolCalls([["bash", { command: `mkdir ${ws}/two` }]]),
    chatToolCalls([["task_done", {}]], "done"),
  ]);
  const traj = `${home}/rec.json`;
  let run;
  try {
    run = await runDeftInPty(
      mockRunArgs(mock, "make files", ws, {
        extra: ["--approval", "commands", "--json", "-t", traj],
      }),
      [
        { expect: "Approve this command\\?[\\s\\S]*yes\\.txt[\\s\\S]*approve> ", send: "y\r" },
        {
          expect: "Approve this command\\?[\\s\\S]*no\\.txt[\\s\\S]*approve> ",
          send: "n not there\r",
        },
        { expect: "Approve this command\\?[\\s\\S]*one[\\s\\S]*approve> ", send: "a\r" },
        { expect: "always> ", send: "s\r" },
      ],
      { cwd: home, env: { HOME: home } },
    );
  } finally {
    await mock.close();
  }
  const out = plain(run.output);
  assert.equal(run.failed, null, out);
  assert.equal(run.code, 0, out);
  assert.equal((out.match(/Approve this command\?/g) ?? []).length, 3, "asked three times");

  // What a CI user reads: per call, the decision and who made it.
  const line = out.split("\n").find((l) => l.startsWith('{"success"'));
  assert.ok(line, `no --json summary in:\n${out}`);
  const summary = JSON.parse(line);
  const expected = [
    { decision: "allow", decided_by: "mode", asked: false, unasked: true },
    { decision: "allow", decided_by: "user", asked: true, answer: "yes" },
    { decision: "deny", decided_by: "user", asked: true, answer: "no", reason: "not there" },
    { decision: "allow", decided_by: "user", asked: true, answer: "always", always: `$ mkdir` },
    { decision: "allow", decided_by: "always", asked: false, always: `$ mkdir` },
    { decision: "allow", decided_by: "mode", asked: false },
  ].map((d) => ({ mode: "commands", ...d }));
  assert.deepEqual(
    summary.approvals.map(({ step: _, call_id: __, tool: ___, ...d }: Record<string, unknown>) =>
      d
    ),
    expected,
  );
  assert.deepEqual(
    summary.approvals.map((a: { tool: string }) => a.tool),
    ["bash", "bash", "bash", "bash", "bash", "task_done"],
  );

  // The trajectory: each decision beside its call's result, under the same call id.
  const recorded = JSON.parse(await Deno.readTextFile(traj));
  const results = recorded.agent_steps.flatMap((s: { tool_results: unknown[] }) => s.tool_results);
  assert.deepEqual(results.map((r: { approval: unknown }) => r.approval), expected);
  assert.deepEqual(
    results.map((r: { call_id: string }) => r.call_id),
    summary.approvals.map((a: { call_id: string }) => a.call_id),
  );
  await assert.rejects(Deno.stat(`${ws}/no.txt`), "the refused command never ran");

  // A replay of that trajectory follows it: the refused call is refused again, the rest run.
  for (const path of ["yes.txt", "one", "two"]) await Deno.remove(`${ws}/${path}`);
  const replay = await runDeft(["run", "--replay", traj, "-w", ws, "--json"], {
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(replay.code, 0, replay.stderr);
  const replayed = JSON.parse(replay.stdout);
  assert.deepEqual(replayed.divergences, []);
  assert.deepEqual(
    replayed.approvals.map((a: { decision: string; decided_by: string }) => [
      a.decision,
      a.decided_by,
    ]),
    [...Array(2).fill(["allow", "recording"]), ["deny", "recording"]].concat(
      Array(3).fill(["allow", "recording"]),
    ),
  );
  await assert.rejects(Deno.stat(`${ws}/no.txt`), "the replay did not run the refused command");
});
