/**
 * `deft sessions` lists a live session's background shells (issue 54): a headless `deft run`
 * with a background shell alive shows it to `deft sessions` run in another process — its id,
 * status and command, masked and inert for a terminal — and once the run has ended, none.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft, runMocked } from "../../helpers/deft.ts";
import { eventually, pidsByCmdline } from "../../helpers/bash.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

Deno.test("deft sessions shows a running deft run's background shell, and none after the run", async () => {
  const repo = await makeBuggyRepo();
  const home = await tempDirUntilExit("deft-home-");
  const env = { HOME: home, XDG_STATE_HOME: join(home, "state") };
  const needle = `907.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const secret = `sk-${"a1B2".repeat(8)}`;
  const go = join(repo, "go");
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: `sleep ${needle} # ${secret} \x1b]0;pwned\x07`,
      run_in_background: true,
    }]]),
    // The run waits here (at most two minutes) until the test has looked.
    chatToolCalls([["bash", {
      command: `for i in $(seq 1200); do [ -e ${go} ] && break; sleep 0.1; done`,
      timeout: 300,
    }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  const sessions = () => runDeft(["sessions", "-w", repo], { cwd: home, env });
  try {
    const running = runMocked(mock, "start a sleeper", repo, {
      cwd: home,
      env,
      extra: ["--approval", "never"],
    });
    let listed = "";
    const shown = await eventually(async () => {
      listed = (await sessions()).stdout;
      return listed.includes(`sleep ${needle}`);
    }, 100_000);
    await Deno.writeTextFile(go, "");
    const run = await running;
    assert.ok(shown, `deft sessions never showed the shell:\n${listed}\n${run.stderr}`);
    assert.match(
      listed,
      new RegExp(
        `\\n {2}background shell bg-[0-9a-f]{24} {2}running {2}started \\d\\d:\\d\\d:\\d\\d {2}` +
          `sleep ${needle.replace(".", "\\.")} # `,
      ),
    );
    assert.ok(!listed.includes(secret), `the key in the command is masked:\n${listed}`);
    assert.ok(!listed.includes("\x1b"), "no escape reaches the terminal");
    assert.equal(run.code, 0, run.stderr);

    const after = await sessions();
    assert.equal(after.code, 0, after.stderr);
    assert.match(after.stdout, /start a sleeper/, "the ended run is still listed");
    assert.doesNotMatch(after.stdout, /background shell/);
    const json = JSON.parse(
      (await runDeft(["sessions", "-w", repo, "--json"], { cwd: home, env }))
        .stdout,
    );
    assert.equal(json[0].background_shells, undefined);
    const left = [];
    for await (const entry of Deno.readDir(join(home, "state/deft/trajectories"))) {
      if (entry.name.endsWith(".shells")) left.push(entry.name);
    }
    assert.deepEqual(left, [], "the session removed its board when it ended");
    assert.ok(await eventually(async () => (await pidsByCmdline(needle)).length === 0));
  } finally {
    await mock.close();
  }
});
