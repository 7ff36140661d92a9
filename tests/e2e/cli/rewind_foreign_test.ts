/**
 * `deft rewind FILE` with a hand-made trajectory that names another workspace's session (issue
 * 48, finding 10): the session's checkpoints were taken elsewhere, so none of its files may land
 * here. The rewind is refused with a message saying whose they are, before anything is written:
 * the workspace, and the trajectory, stay byte for byte as they were.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { git } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";

/** Every file under `dir` but `.git`, with its bytes. */
async function snapshot(dir: string, under = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const entry of Deno.readDir(`${dir}/${under}`)) {
    const rel = under ? `${under}/${entry.name}` : entry.name;
    if (rel === ".git") continue;
    if (entry.isDirectory) Object.assign(out, await snapshot(dir, rel));
    else out[rel] = await Deno.readTextFile(`${dir}/${rel}`);
  }
  return out;
}

async function repo(files: Record<string, string>): Promise<string> {
  const dir = await tempDirUntilExit("deft-rewind-repo-");
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  await git(dir, "init", "-q");
  await git(dir, "add", ".");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
  return dir;
}

Deno.test("deft rewind: a trajectory naming another workspace's session is refused, nothing written", async () => {
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const other = await repo({ "f.txt": "other 0\n", "shared.txt": "other\n" });
  const mine = await repo({ "f.txt": "mine 0\n", "shared.txt": "mine\n", "only-mine.txt": "x\n" });
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: "echo 'other 1' > f.txt && echo 'other 1' > shared.txt && echo new > from-other.txt",
    }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  let trajectoryPath: string;
  try {
    const run = await runDeft(
      [
        "run",
        "edit",
        "-w",
        other,
        ...mockModelArgs(mock),
      ],
      { cwd: h, env },
    );
    assert.equal(run.code, 0, run.stderr);
    trajectoryPath = /trajectory saved to (\S+)/.exec(run.stderr)![1];
  } finally {
    await mock.close();
  }
  // The hand-made trajectory: the other session, said to be recorded here.
  const data = JSON.parse(await Deno.readTextFile(trajectoryPath));
  assert.ok(data.checkpoints?.length >= 2, "the other session took checkpoints");
  data.working_dir = mine;
  const forged = `${h}/forged.json`;
  const forgedText = JSON.stringify(data, null, 2) + "\n";
  await Deno.writeTextFile(forged, forgedText);
  const before = await snapshot(mine);

  for (const extra of [["--force"], []]) {
    // Turn 1's files are all in the other session's store: without the check they land here.
    const back = await runDeft(["rewind", forged, "-w", mine, "--to", "1", ...extra], {
      cwd: h,
      env,
    });
    assert.equal(back.code, 2, back.stderr);
    assert.match(
      back.stderr,
      new RegExp(`taken in ${other}, not in this workspace \\(${mine}\\).*nothing was changed`),
    );
    assert.deepEqual(await snapshot(mine), before, "not one file of this workspace changed");
    assert.equal(await Deno.readTextFile(forged), forgedText, "the trajectory is not written");
  }

  // The other workspace's own rewind still works.
  const own = await runDeft(["rewind", trajectoryPath, "-w", other, "--to", "0"], { cwd: h, env });
  assert.equal(own.code, 0, own.stderr);
  assert.equal(await Deno.readTextFile(`${other}/f.txt`), "other 0\n");
});
