import assert from "node:assert/strict";
import { readTrajectory, TrajectoryRecorder } from "../../../src/trajectory/recorder.ts";
import { emptyUsage } from "../../../src/llm/types.ts";
import { tempDir } from "../../helpers/temp.ts";

const response = (content: string) => ({
  content,
  tool_calls: [],
  usage: { ...emptyUsage(), input_tokens: 10, output_tokens: 2 },
  finish_reason: "stop",
  model: "m",
});

Deno.test("the file holds the last completed step after each write; no temp file is left", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const path = `${dir}/nested/t.json`;
  const rec = new TrajectoryRecorder(path, { task: "t", provider: "p", model: "m", max_steps: 3 });
  rec.recordInteraction({
    provider: "p",
    model: "m",
    input_messages: [],
    response: response("a"),
    tools_available: [],
  });
  let onDisk = await readTrajectory(path);
  assert.equal(onDisk.llm_interactions.length, 1);
  assert.equal(onDisk.end_time, null);
  rec.recordStep({
    step_number: 1,
    state: "completed",
    llm_response: response("a"),
    tool_calls: [],
    tool_results: [],
    reflection: null,
    error: null,
  });
  onDisk = await readTrajectory(path);
  assert.equal(onDisk.agent_steps.length, 1);
  rec.finalize(true, "done");
  onDisk = await readTrajectory(path);
  assert.equal(onDisk.success, true);
  assert.equal(onDisk.total_usage.input_tokens, 10);
  assert.ok(onDisk.execution_time >= 0);
  // No temporary files are left beside it.
  assert.deepEqual([...Deno.readDirSync(`${dir}/nested`)].map((e) => e.name), ["t.json"]);
});

Deno.test("secrets never reach the file", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const path = `${dir}/t.json`;
  const secret = "sk-live-abcdef123456";
  const rec = new TrajectoryRecorder(path, {
    task: `use ${secret}`,
    provider: "p",
    model: "m",
    max_steps: 1,
  }, [secret, undefined]);
  rec.recordInteraction({
    provider: "p",
    model: "m",
    input_messages: [{ role: "user", content: secret }],
    response: response(secret),
    tools_available: [],
  });
  const text = await Deno.readTextFile(path);
  assert.ok(!text.includes(secret));
  assert.match(text, /\*\*\*/);
});

Deno.test("the document is replaced by rename, never rewritten in place; steps go to its journal", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const path = `${dir}/t.json`;
  const rec = new TrajectoryRecorder(path, { task: "t", provider: "p", model: "m", max_steps: 3 });
  const interaction = (content: string) => ({
    provider: "p",
    model: "m",
    input_messages: [],
    response: response(content),
    tools_available: [],
  });
  rec.recordInteraction(interaction("a"));
  const first = await Deno.stat(path);
  const firstText = await Deno.readTextFile(path);
  rec.recordInteraction(interaction("b"));
  rec.recordInteraction(interaction("c"));
  // Between the first record and the end the document is left alone: the records are appended
  // to its journal, and a reader folds them in.
  assert.equal((await Deno.stat(path)).ino, first.ino);
  assert.equal(await Deno.readTextFile(path), firstText);
  assert.equal((await readTrajectory(path)).llm_interactions.length, 3);
  rec.finalize(true, "done");
  // The end writes the whole document by rename (a new inode, never the old one rewritten) and
  // removes the journal.
  assert.notEqual((await Deno.stat(path)).ino, first.ino, "rewritten in place");
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["t.json"]);
  const whole = JSON.parse(await Deno.readTextFile(path));
  assert.equal(whole.llm_interactions.length, 3);
  assert.equal(whole.journal_id, undefined);
});

Deno.test("a reader in another process never sees a partial trajectory while steps are written", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  const path = `${dir}/t.json`;
  const stop = `${dir}/stop`;
  // Reads the file as fast as it can until told to stop; counts reads and unparsable ones.
  const reader = new Deno.Command("python3", {
    args: [
      "-c",
      `import json, os, sys
path, stop = sys.argv[1], sys.argv[2]
reads = bad = 0
open(stop + ".ready", "w").close()
while not os.path.exists(stop):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        continue
    reads += 1
    try:
        json.loads(data)
    except ValueError:
        bad += 1
print(json.dumps({"reads": reads, "bad": bad}))`,
      path,
      stop,
    ],
    stdout: "piped",
  }).spawn();
  // Start writing only once the reader is reading.
  while (!(await Deno.stat(`${stop}.ready`).then(() => true, () => false))) {
    await new Promise((r) => setTimeout(r, 10));
  }
  const rec = new TrajectoryRecorder(path, { task: "t", provider: "p", model: "m", max_steps: 1 });
  // Steps big enough (growing by 30 KB a step) that a write in place takes long enough for the
  // reader to catch it half done.
  const big = "x".repeat(30_000);
  for (let i = 0; i < 100; i++) {
    rec.recordInteraction({
      provider: "p",
      model: "m",
      input_messages: [{ role: "user", content: big }],
      response: response(`${i}`),
      tools_available: [],
    });
    await new Promise((r) => setTimeout(r, 2));
  }
  await Deno.writeTextFile(stop, "");
  const out = JSON.parse(new TextDecoder().decode((await reader.output()).stdout));
  assert.ok(out.reads > 0, "the reader never read the file");
  assert.equal(out.bad, 0, `${out.bad} of ${out.reads} reads saw a partial trajectory`);
});
