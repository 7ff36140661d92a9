/**
 * A reader the approval gate lets through unasked runs where it cannot act, even in a session
 * that allows the network and sets variables for the shell (issue 37): a program a hostile
 * repository plants, which git runs for `git status`, reaches no network (a listener this test
 * opens on the host's loopback sees no connection) and sees only the core variables — none of
 * Deft's own others, none of the session's `shell_environment.set` values.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ApprovalGate } from "../../../src/gate/approval.ts";
import { NON_INTERACTIVE_ENV } from "../../../src/policy/process.ts";
import { CORE_VARIABLES } from "../../../src/policy/shell_env.ts";
import { ToolExecutor } from "../../../src/tools/executor.ts";
import { createTools } from "../../../src/tools/registry.ts";
import { git } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const OWN = { name: "DEFT_TEST_OWN_SETTING", value: "deft-own-value-7f3a" };
const SET = { name: "DEFT_TEST_SET_VALUE", value: "session-set-value-91c2" };

// What a shell and git add by themselves, and Deft's fixed settings and markers for every shell
// (no pagers or editors; the session's marks, by which its processes are found).
const SHELL_OWN = new Set([
  "PWD",
  "OLDPWD",
  "SHLVL",
  "_",
  ...Object.keys(NON_INTERACTIVE_ENV),
  "DEFT_BASH_SESSION",
  "DEFT_BASH_CALL",
]);

Deno.test("allow_network and shell_environment.set: an unasked reader's planted program has neither", async () => {
  await using dir = await tempDir("deft-unasked-net-");
  const repo = dir.path;
  await git(repo, "init", "-q");
  await Deno.writeTextFile(join(repo, "a.txt"), "hello\n");
  await git(repo, "add", "a.txt");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");

  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      connections++;
      conn.close();
    }
  })();
  // The plant: what it sees, and whether it can reach the host's loopback.
  const plant = join(repo, ".git", "monitor");
  await Deno.writeTextFile(
    plant,
    "#!/bin/bash\n" +
      'echo "DEFT-ENV-BEGIN"; env -0 | tr "\\0" "\\36"; echo; echo "DEFT-ENV-END"\n' +
      `if (echo hi > /dev/tcp/127.0.0.1/${listener.addr.port}) 2>/dev/null; ` +
      "then echo DEFT-NET-REACHED; else echo DEFT-NET-REFUSED; fi\n",
  );
  await Deno.chmod(plant, 0o755);
  // Its output goes to git's stderr, which the tool returns.
  await git(repo, "config", "core.fsmonitor", `${plant} >&2`);

  Deno.env.set(OWN.name, OWN.value);
  const tools = createTools({
    provider: "openai",
    workspace: repo,
    settings: { allowNetwork: true, shellEnvironment: { set: { [SET.name]: SET.value } } },
  }, ["bash"]);
  const questions: string[] = [];
  const gate = new ApprovalGate(
    "commands",
    () => Promise.resolve("n"),
    (text) => questions.push(text),
    repo,
  );
  const executor = new ToolExecutor(tools, gate);
  try {
    // A command that is not a reader is asked (and refused here).
    await executor.executeToolCall({
      name: "bash",
      call_id: "asked",
      arguments: { command: `touch b.txt` },
    });
    assert.equal(questions.length, 1, "a command that is not a reader is asked");

    const status = await executor.executeToolCall({
      name: "bash",
      call_id: "c",
      arguments: { command: "git status" },
    });
    assert.equal(questions.length, 1, "git status ran unasked");
    const said = `${status.output}\n${status.error}`;
    assert.match(said, /DEFT-NET-(REACHED|REFUSED)/, `the plant did not run:\n${said}`);
    assert.match(said, /DEFT-NET-REFUSED/, "the plant reached the host's network");
    assert.equal(connections, 0, "the listener on the host's loopback was connected to");

    const block = /DEFT-ENV-BEGIN\n([^\n]*)\nDEFT-ENV-END/.exec(said);
    assert.ok(block, `the plant's environment was not shown:\n${said}`);
    const names = block[1].split("\x1e").filter((v) => v !== "").map((v) => v.split("=")[0]);
    assert.ok(names.includes("PATH") && names.includes("HOME"), `core variables: ${names}`);
    assert.ok(!said.includes(SET.value), "a shell_environment.set value reached the plant");
    assert.ok(!said.includes(OWN.value), "one of Deft's own variables reached the plant");
    const extra = names.filter((n) =>
      !CORE_VARIABLES.includes(n) && !SHELL_OWN.has(n) && !n.startsWith("GIT_")
    );
    assert.deepEqual(extra, [], "only the core variables (and what git and bash add)");
  } finally {
    Deno.env.delete(OWN.name);
    await executor.closeTools();
    listener.close();
    await accepting.catch(() => {});
  }
});
