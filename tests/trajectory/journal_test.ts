/**
 * Promises of the trajectory's journal (issue 51: long sessions stay flat):
 * - a step writes only itself: the bytes a step adds do not grow with the run, and the document
 *   is not rewritten between the first record and the end: "a step writes only itself …";
 * - a run that never ended (a crash) reads whole, every record folded in: "a crashed run …";
 * - a line cut short by the crash is left out, the records before it kept: "… cut short …";
 * - a journal left from an older generation is never folded in twice: "a leftover journal …";
 * - secrets are masked in the journal as in the document: "secrets never reach the journal";
 * - the user's prompts, `!commands` and /undo (issue 52) are one journal line each, read back
 *   while the run goes and after it ends: "the user's prompts and commands are each appended …".
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { readTrajectory, TrajectoryRecorder } from "../../src/trajectory/recorder.ts";
import { journalPath } from "../../src/trajectory/journal.ts";
import { emptyUsage } from "../../src/llm/types.ts";
import { tempDir } from "../helpers/temp.ts";

const response = (content: string) => ({
  content,
  tool_calls: [],
  usage: { ...emptyUsage(), input_tokens: 10, output_tokens: 2 },
  finish_reason: "stop",
  model: "m",
});

/** Records one step of a run: a model call and its (bulky) tool result. */
function step(rec: TrajectoryRecorder, n: number, output = "x".repeat(2000)): void {
  rec.recordInteraction({
    provider: "p",
    model: "m",
    input_messages: [{ role: "user", content: `step ${n}` }],
    response: response(`answer ${n}`),
    tools_available: ["bash"],
  });
  rec.recordStep({
    step_number: n,
    state: "completed",
    llm_response: response(`answer ${n}`),
    tool_calls: [{ call_id: `c${n}`, name: "bash", arguments: { command: "ls" } }],
    tool_results: [{ call_id: `c${n}`, name: "bash", success: true, result: output, error: null }],
    reflection: null,
    error: null,
  });
}

function recorder(path: string, secrets: string[] = []): TrajectoryRecorder {
  return new TrajectoryRecorder(path, {
    task: "t",
    provider: "p",
    model: "m",
    max_steps: 1000,
  }, secrets);
}

Deno.test("journal: a step writes only itself, however long the run", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  const rec = recorder(path);
  step(rec, 1);
  const document = await Deno.stat(path);
  const grown: number[] = [];
  for (let n = 2; n <= 500; n++) {
    const before = Deno.statSync(journalPath(path)).size;
    step(rec, n);
    grown.push(Deno.statSync(journalPath(path)).size - before);
  }
  // Step 500 appends about what step 10 appended (only the step number's digits differ).
  assert.ok(grown[498] - grown[8] < 64, `step 10 wrote ${grown[8]} bytes, step 500 ${grown[498]}`);
  const now = await Deno.stat(path);
  assert.equal(now.ino, document.ino);
  assert.equal(now.size, document.size, "the document was rewritten between records");
  rec.finalize(true, "done");
  const whole = await readTrajectory(path);
  assert.equal(whole.agent_steps.length, 500);
  assert.equal(whole.llm_interactions.length, 500);
  assert.equal(whole.total_usage.input_tokens, 5000);
});

Deno.test("journal: a crashed run reads whole, every record folded in", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  const rec = recorder(path);
  for (let n = 1; n <= 5; n++) step(rec, n);
  rec.annotateStep(3, { tag: "TEST", summary: "ran the tests" });
  rec.data.hook_stop = { event: "Stop", hook: "h", reason: "stopped" };
  rec.flush();
  // No finalize: the process died here.
  const read = await readTrajectory(path);
  assert.deepEqual(read.agent_steps.map((s) => s.step_number), [1, 2, 3, 4, 5]);
  assert.equal(read.llm_interactions.length, 5);
  assert.equal(read.total_usage.input_tokens, 50);
  assert.equal(read.agent_steps[2].lakeview?.tag, "TEST");
  assert.equal(read.hook_stop?.reason, "stopped");
  assert.equal(read.end_time, null);
  assert.equal((read as { journal_id?: string }).journal_id, undefined);
});

Deno.test("journal: a line cut short by a crash is left out, the records before it kept", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  const rec = recorder(path);
  for (let n = 1; n <= 3; n++) step(rec, n);
  // The write of step 4 was cut off half way.
  const text = await Deno.readTextFile(journalPath(path));
  const lines = text.trimEnd().split("\n");
  await Deno.writeTextFile(journalPath(path), `${text}${lines.at(-1)!.slice(0, 40)}`);
  const read = await readTrajectory(path);
  assert.deepEqual(read.agent_steps.map((s) => s.step_number), [1, 2, 3]);
});

Deno.test("journal: a leftover journal of an older generation is never folded in twice", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  const rec = recorder(path);
  for (let n = 1; n <= 3; n++) step(rec, n);
  const older = await Deno.readTextFile(journalPath(path));
  rec.finalize(true, "done");
  // The process died between writing the whole document and removing the journal.
  await Deno.writeTextFile(journalPath(path), older);
  assert.deepEqual((await readTrajectory(path)).agent_steps.map((s) => s.step_number), [1, 2, 3]);
  // The next turn writes the document whole again, naming a new journal; had it died before that
  // journal replaced the old one, the old one is still not folded in.
  rec.recordInteraction({
    provider: "p",
    model: "m",
    input_messages: [{ role: "user", content: "next turn" }],
    response: response("next"),
    tools_available: [],
  });
  await Deno.writeTextFile(journalPath(path), older);
  const read = await readTrajectory(path);
  assert.deepEqual(read.agent_steps.map((s) => s.step_number), [1, 2, 3]);
  assert.equal(read.llm_interactions.length, 4);
});

Deno.test("journal: secrets never reach the journal", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  const secret = "sk-live-journal-0123456789";
  const rec = recorder(path, [secret]);
  step(rec, 1);
  step(rec, 2, `the key is ${secret}`);
  rec.data.hook_stop = { event: "Stop", hook: "h", reason: `leaked ${secret}` };
  rec.flush();
  const journal = await Deno.readTextFile(journalPath(path));
  assert.ok(!journal.includes(secret), "the secret is in the journal");
  assert.match(journal, /\*\*\*/);
  assert.ok(!(await Deno.readTextFile(path)).includes(secret));
});

Deno.test("journal: the user's prompts and commands are each appended once, read back before and after the end", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  const rec = recorder(path);
  rec.recordEvent({ kind: "prompt", text: "first" });
  step(rec, 1);
  rec.recordEvent({ kind: "shell", command: "ls", output: "a\nb\n(exit code 0)" });
  rec.recordEvent({ kind: "prompt", text: "second" });
  step(rec, 2);
  rec.recordEvent({ kind: "undo", said: "reverted an edit of a.txt" });
  const kinds = (events: { kind: string; at_steps: number }[] | undefined) =>
    events?.map((e) => `${e.kind}@${e.at_steps}`);
  const running = await readTrajectory(path);
  assert.deepEqual(kinds(running.events), ["prompt@0", "shell@1", "prompt@1", "undo@2"]);
  // Each event is one line of its own; the header lines a step appends do not carry them again.
  const lines = (await Deno.readTextFile(journalPath(path))).split("\n");
  assert.equal(lines.filter((l) => l.includes('"second"')).length, 1);
  rec.finalize(true, "done");
  assert.deepEqual(kinds((await readTrajectory(path)).events), kinds(running.events));
});
