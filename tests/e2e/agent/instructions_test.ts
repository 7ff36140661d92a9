import assert from "node:assert/strict";
import { loadProjectInstructions, MAX_FILE_BYTES } from "../../../src/agent/instructions.ts";
import { runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("AGENTS.md at the repository root and in the workspace: both, farthest first", async () => {
  await using outerTemp = await tempDir();
  const outer = outerTemp.path;
  // Above the repository root: never read.
  await Deno.writeTextFile(`${outer}/AGENTS.md`, "OUTSIDE RULE\n");
  const repo = `${outer}/repo`;
  await Deno.mkdir(`${repo}/pkg/sub`, { recursive: true });
  const init = await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
  assert.ok(init.success);
  await Deno.writeTextFile(`${repo}/AGENTS.md`, "ROOT RULE: use tabs.\n");
  await Deno.writeTextFile(`${repo}/pkg/sub/AGENTS.md`, "SUB RULE: use spaces here.\n");
  const found = await loadProjectInstructions(`${repo}/pkg/sub`);
  assert.deepEqual(found.files.map((f) => f.path), [
    `${repo}/AGENTS.md`,
    `${repo}/pkg/sub/AGENTS.md`,
  ]);
  assert.ok(found.prompt.indexOf("ROOT RULE") < found.prompt.indexOf("SUB RULE"));
  assert.doesNotMatch(found.prompt, /OUTSIDE RULE/);
});

Deno.test("AGENTS.md: a symlink out of the repository and a FIFO are not read; big files are cut", async () => {
  const repo = await makeBuggyRepo();
  await using secretDir = await tempDir();
  const secret = `${secretDir.path}/secret`;
  await Deno.writeTextFile(secret, "TOP SECRET");
  await Deno.symlink(secret, `${repo}/AGENTS.md`);
  assert.deepEqual((await loadProjectInstructions(repo)).files, []);

  await Deno.remove(`${repo}/AGENTS.md`);
  const fifo = await new Deno.Command("mkfifo", { args: [`${repo}/AGENTS.md`] }).output();
  assert.ok(fifo.success);
  assert.deepEqual((await loadProjectInstructions(repo)).files, [], "a FIFO would block: skipped");

  await Deno.remove(`${repo}/AGENTS.md`);
  await Deno.writeTextFile(`${repo}/AGENTS.md`, "x".repeat(MAX_FILE_BYTES * 3));
  const big = await loadProjectInstructions(repo);
  assert.equal(big.files[0].bytes, MAX_FILE_BYTES);
  assert.equal(big.files[0].truncated, true);
  assert.match(big.prompt, /cut at 32768 bytes/);
});

Deno.test("deft run puts AGENTS.md into the system prompt and notes the files in the trajectory", async () => {
  const repo = await makeBuggyRepo();
  await Deno.mkdir(`${repo}/app`);
  await Deno.writeTextFile(`${repo}/AGENTS.md`, "ROOT RULE: run check.py.\n");
  await Deno.writeTextFile(`${repo}/app/AGENTS.md`, "APP RULE: keep it short.\n");
  await using hTemp = await tempDir();
  const h = hTemp.path;
  const mock = MockLLM.start([
    chatToolCalls([["task_done", {}]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const traj = `${h}/t.json`;
    const r = await runMocked(mock, "x", `${repo}/app`, {
      model: "m",
      apiKey: null,
      extra: ["-t", traj],
      cwd: h,
      env: { HOME: h },
    });
    assert.equal(r.code, 0, r.stderr);
    const system: string = mock.requests[0].body.messages[0].content;
    assert.match(system, /ROOT RULE[\s\S]*APP RULE/);
    const t = JSON.parse(await Deno.readTextFile(traj));
    assert.deepEqual(
      t.project_instructions.map((f: { path: string }) => f.path),
      [`${repo}/AGENTS.md`, `${repo}/app/AGENTS.md`],
    );

    const off = await runMocked(mock, "x", `${repo}/app`, {
      model: "m",
      apiKey: null,
      extra: ["--no-project-instructions"],
      cwd: h,
      env: { HOME: h },
    });
    assert.equal(off.code, 0, off.stderr);
    assert.doesNotMatch(mock.requests[1].body.messages[0].content, /ROOT RULE|APP RULE/);
  } finally {
    await mock.close();
  }
});
