import assert from "node:assert/strict";
import { runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("--patch-path outside a git repository is refused at start, and no file is written", async () => {
  await using dir = await tempDir("deft-nogit-");
  await using home = await tempDir("deft-home-");
  const patchPath = `${home.path}/fix.patch`;
  const mock = MockLLM.start([]);
  try {
    const r = await runMocked(mock, "task", dir.path, {
      extra: ["--patch-path", patchPath, "--sandbox", "none"],
      cwd: home.path,
      env: { HOME: home.path },
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--patch-path needs a git repository/);
    assert.ok(r.stderr.includes(dir.path), r.stderr);
    assert.match(r.stderr, /git init/);
    assert.equal(mock.requests.length, 0, "the model was never asked");
    await assert.rejects(Deno.stat(patchPath), Deno.errors.NotFound);
  } finally {
    await mock.close();
  }
});

Deno.test("--patch-path: a workspace that stops being a repository mid-run gets a warning, no file", async () => {
  const repo = await makeBuggyRepo();
  await using home = await tempDir("deft-home-");
  const patchPath = `${home.path}/fix.patch`;
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `rm -rf ${repo}/.git` }]]),
    chatToolCalls([["task_done", {}]], "done"),
  ]);
  try {
    const r = await runMocked(mock, "task", repo, {
      extra: ["--patch-path", patchPath, "--sandbox", "none", "--json"],
      cwd: home.path,
      env: { HOME: home.path },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /is not a git repository \(any more\), so there is no patch/);
    assert.ok(r.stderr.includes(patchPath), r.stderr);
    await assert.rejects(Deno.stat(patchPath), Deno.errors.NotFound);
    assert.equal(JSON.parse(r.stdout).patch_path, null);
  } finally {
    await mock.close();
    await Deno.remove(repo, { recursive: true });
  }
});

for (const mode of ["none", "workspace-write"] as const) {
  Deno.test(`--patch-path: a FIFO the model named .gitignore is named, no empty patch written; --must-patch fails (sandbox ${mode})`, async () => {
    const repo = await makeBuggyRepo();
    await using home = await tempDir("deft-home-");
    const patchPath = `${home.path}/fix.patch`;
    const mock = MockLLM.start([
      chatToolCalls([["bash", {
        command: "echo '# edited' >> calc.py && mkfifo .gitignore",
      }]]),
      chatToolCalls([["task_done", {}]], "done"),
      chatToolCalls([["task_done", {}]], "done"),
    ]);
    try {
      const started = Date.now();
      const r = await runMocked(mock, "task", repo, {
        extra: ["--patch-path", patchPath, "--sandbox", mode, "--must-patch", "--max-steps", "3"],
        cwd: home.path,
        env: { HOME: home.path },
      });
      assert.ok(Date.now() - started < 60_000, "waited on the FIFO");
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /could not compute the patch: .*\.gitignore is not a regular file/);
      assert.match(r.stderr, /no patch written to/);
      await assert.rejects(Deno.stat(patchPath), Deno.errors.NotFound);
      // The model was told why its task_done was refused.
      const told = JSON.stringify(mock.requests.at(-1)?.body);
      assert.match(told, /the patch could not be computed/);
    } finally {
      await mock.close();
      await Deno.remove(repo, { recursive: true });
    }
  });
}
