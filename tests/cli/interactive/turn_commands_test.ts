import assert from "node:assert/strict";
import {
  costReport,
  initPrompt,
  initTarget,
  undoStack,
} from "../../../src/cli/interactive/turn_commands.ts";
import type { Session, TurnRecord } from "../../../src/agent/session.ts";
import { emptyUsage } from "../../../src/llm/types.ts";
import { tempDir } from "../../helpers/temp.ts";

const edit = (command: string, path: string, success = true) => ({
  name: "str_replace_based_edit_tool",
  arguments: { command, path },
  success,
});

function turn(calls: TurnRecord["calls"]): TurnRecord {
  return { provider: "openai", model: "gpt-4o", usage: emptyUsage(), calls };
}

Deno.test("undoStack: successful edits in order, minus the model's own undos and failures", () => {
  const stack = undoStack(turn([
    edit("create", "/w/a"),
    edit("str_replace", "/w/b"),
    edit("view", "/w/b"),
    edit("str_replace", "/w/b", false),
    edit("insert", "/w/a"),
    edit("undo_edit", "/w/a"),
    { name: "bash", arguments: { command: "rm -rf /w" }, success: true },
    { name: "json_edit_tool", arguments: { operation: "set", file_path: "/w/c" }, success: true },
    edit("str_replace", "/w/b"),
    { name: "str_replace_based_edit_tool", arguments: null, success: true },
  ]));
  assert.deepEqual(stack.map((s) => s.path), ["/w/a", "/w/b", "/w/b"]);
  assert.ok(stack.every((s) => s.tool === "str_replace_based_edit_tool"));
});

Deno.test("costReport: per turn and total; an unknown model's cost is unknown and says why", () => {
  const session = {
    config: { prices: undefined },
    turns: [] as TurnRecord[],
  } as unknown as Session;
  assert.equal(costReport(session), "no model calls yet in this session.");
  const usage = { ...emptyUsage(), input_tokens: 1_000_000, output_tokens: 100_000 };
  session.turns!.push({ ...turn([]), usage });
  session.turns!.push({ ...turn([]), usage, kind: "compact" });
  assert.match(costReport(session), /^turn 1 .*1000000 in, 100000 out {2}\$3\.5000 {2}gpt-4o$/m);
  assert.match(costReport(session), /^\/compact .*\$3\.5000/m);
  assert.match(costReport(session), /^total .*2000000 in, 200000 out {2}\$7\.0000$/m);
  session.turns!.push({ ...turn([]), model: "my-own-model", usage });
  const report = costReport(session);
  assert.match(report, /^turn 2 .*\$\? {2}my-own-model$/m);
  assert.match(report, /^total .*\$\?$/m);
  assert.match(report, /no price known for my-own-model: set one with the `prices` key/);
  // In the user's own config, named, not in a repository's deft.yaml.
  assert.match(report, /`prices` key in your config \(\S*\/deft\/config\.yaml; USD/);
});

Deno.test("initTarget: AGENTS.md when absent, else the first free draft name", async () => {
  await using dir = await tempDir();
  assert.deepEqual(await initTarget(dir.path), { path: `${dir.path}/AGENTS.md`, draft: false });
  await Deno.writeTextFile(`${dir.path}/AGENTS.md`, "x");
  assert.deepEqual(await initTarget(dir.path), {
    path: `${dir.path}/AGENTS.draft.md`,
    draft: true,
  });
  await Deno.writeTextFile(`${dir.path}/AGENTS.draft.md`, "x");
  assert.equal((await initTarget(dir.path)).path, `${dir.path}/AGENTS.draft-2.md`);
  assert.match(initPrompt(`${dir.path}/AGENTS.draft-2.md`, true), /do not change it/);
  assert.doesNotMatch(initPrompt(`${dir.path}/AGENTS.md`, false), /already exists/);
});
