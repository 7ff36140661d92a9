/**
 * The hooks around a session's turns under a network list: SessionStart, UserPromptSubmit and
 * SessionEnd run in the shell's sandbox, through the same proxy, and their destinations are shown
 * on the console and recorded in the trajectory as the shell's are (issue 53: once, the listener
 * was live only while the model's turn ran, so these went unseen).
 */
import assert from "node:assert/strict";
import { runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { loopbackServer } from "../../helpers/loopback.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";

/** A hook command: its input read, then `curl` of URL (the answer into FILE in the workspace). */
const curlHook = (url: string, file: string) =>
  `cat >/dev/null; curl -sS --max-time 10 ${url} > ${file} 2>&1; true`;

Deno.test("network list: SessionStart, UserPromptSubmit and SessionEnd hooks' destinations are shown and recorded", async () => {
  const start = await loopbackServer("start");
  const prompt = await loopbackServer("prompt");
  const end = await loopbackServer("end");
  const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;
  const hook = (event: string, command: string) =>
    `  ${event}:\n    - hooks:\n        - { type: command, command: ${JSON.stringify(command)} }\n`;
  const home = await trustedHomeWith(
    "deft-hooks-net-session-",
    () =>
      // The prompt hook's server is not in the list: its request is refused.
      `network:\n  allow: ["127.0.0.1:${start.port}", "127.0.0.1:${end.port}"]\n` +
      `hooks:\n` +
      hook("SessionStart", curlHook(url(start.port, "/start-path"), "start.txt")) +
      hook("UserPromptSubmit", curlHook(url(prompt.port, "/prompt-path"), "prompt.txt")) +
      hook("SessionEnd", curlHook(url(end.port, "/end-path"), "end.txt")),
  );
  const workspace = `${home}/ws`;
  await Deno.mkdir(workspace);
  const mock = MockLLM.start([
    chatToolCalls([["task_done", {}]], "done"),
    chatText("done"),
  ]);
  try {
    const trajectory = `${home}/t.json`;
    const run = await runMocked(mock, "go", workspace, {
      cwd: home,
      env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      extra: ["--sandbox", "workspace-write", "--approval", "never", "-t", trajectory],
    });
    assert.equal(run.code, 0, run.stderr);
    // The hooks ran, through the proxy.
    assert.deepEqual(start.paths, ["/start-path"], run.stderr);
    assert.deepEqual(end.paths, ["/end-path"], run.stderr);
    assert.deepEqual(prompt.paths, [], "the unlisted server was never reached");
    // Shown on the console, as the shell's are.
    assert.match(run.stderr, new RegExp(`network: allowed 127\\.0\\.0\\.1:${start.port}\\b`));
    assert.match(
      run.stderr,
      new RegExp(`network: blocked 127\\.0\\.0\\.1:${prompt.port} \\(port ${prompt.port} not`),
    );
    assert.match(run.stderr, new RegExp(`network: allowed 127\\.0\\.0\\.1:${end.port}\\b`));
    // Recorded in the trajectory, host and port only.
    const recorded = JSON.parse(await Deno.readTextFile(trajectory)).network as {
      host: string;
      port: number;
      allowed: boolean;
    }[];
    assert.deepEqual(recorded.map((r) => [r.host, r.port, r.allowed]), [
      ["127.0.0.1", start.port, true],
      ["127.0.0.1", prompt.port, false],
      ["127.0.0.1", end.port, true],
    ]);
    assert.doesNotMatch(JSON.stringify(recorded), /-path/, "no path is recorded");
  } finally {
    await mock.close();
    await start.close();
    await prompt.close();
    await end.close();
  }
});
