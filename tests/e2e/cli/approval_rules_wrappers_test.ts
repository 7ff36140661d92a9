/**
 * A deny rule holds through wrappers in a real run (issue 48, finding 7): with a policy file
 * `deny: ["$ rm"]`, the model's `bash -c 'rm x'`, `/usr/bin/env rm`, `nice`, `timeout`, `sh -c`
 * and `eval` are refused by the rule and every file survives; an `--approval-rules` file that is
 * a FIFO is refused at once with a clear message instead of hanging the start.
 */
import assert from "node:assert/strict";
import { runMocked } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

const WRAPPED = [
  "bash -c 'rm a'",
  "sh -c 'rm b'",
  'eval "rm c"',
  "nice -n 5 rm d",
  "timeout 10 rm e",
  "/usr/bin/env rm f",
];

Deno.test("rules: deny `$ rm` refuses rm run through bash -c, sh -c, eval, nice, timeout and /usr/bin/env; the files survive", async () => {
  await using homeTemp = await tempDir();
  await using repoTemp = await tempDir();
  const home = homeTemp.path;
  const repo = repoTemp.path;
  for (const name of "abcdef") await Deno.writeTextFile(`${repo}/${name}`, name);
  const policy = `${home}/ci-policy.yaml`;
  await Deno.writeTextFile(policy, 'deny: ["$ rm", "$ curl"]\n');
  const mock = MockLLM.start([
    chatToolCalls(WRAPPED.map((command) => ["bash", { command }])),
    chatText("Done."),
  ]);
  try {
    const r = await runMocked(mock, "clean up", repo, {
      cwd: repo,
      env: { HOME: home },
      extra: ["--approval-rules", policy, "--json"],
    });
    assert.equal(r.code, 0, r.stderr);
    for (const name of "abcdef") {
      assert.equal(await Deno.readTextFile(`${repo}/${name}`), name, `${name} survives`);
    }
    const summary = JSON.stringify(JSON.parse(r.stdout));
    const denied = summary.match(/"decision":"deny","decided_by":"rule"/g) ?? [];
    assert.equal(denied.length, WRAPPED.length, summary);
    assert.match(summary, /"rule":\{"text":"\$ rm","source":"[^"]*ci-policy\.yaml"\}/);
  } finally {
    await mock.close();
  }
});

Deno.test("rules: an --approval-rules file that is a FIFO is refused at start, naming it", async () => {
  await using homeTemp = await tempDir();
  await using repoTemp = await tempDir();
  const home = homeTemp.path;
  const fifo = `${home}/policy.yaml`;
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  const mock = MockLLM.start([chatText("Done.")]);
  try {
    const r = await runMocked(mock, "x", repoTemp.path, {
      cwd: repoTemp.path,
      env: { HOME: home },
      extra: ["--approval-rules", fifo],
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /policy\.yaml is a FIFO \(named pipe\), not a regular file/);
  } finally {
    await mock.close();
  }
});
