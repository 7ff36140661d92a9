/**
 * A background shell's end is visible to the PostToolUse hooks of the `bash_output` call that
 * reads it (issue 54, Deliver 3): the hook gets the call's input (the shell id) and its result,
 * which says the shell exited and with which exit code, and holds the output it left.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM, type MockRequest } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";

/** The shell id the model was answered with, from the conversation a request sends. */
function shellIdIn(request: MockRequest): string | undefined {
  const messages: { role: string; content: string }[] = request.body.messages ?? [];
  for (const m of messages) {
    const id = m.role === "tool" ? /shell_id: (bg-[0-9a-f]+)/.exec(m.content)?.[1] : undefined;
    if (id) return id;
  }
  return undefined;
}

Deno.test("PostToolUse of the bash_output that reads a background shell's end sees it", async () => {
  const repo = await makeBuggyRepo();
  const seen = join(repo, "post-tool-use.jsonl");
  const home = await trustedHomeWith(
    "deft-hooks-",
    () =>
      `hooks:\n  PostToolUse:\n    - matcher: bash_output\n      hooks:\n` +
      `        - { type: command, command: ${
        JSON.stringify(`cat >> ${seen}; echo >> ${seen}`)
      } }\n`,
  );
  let read = false;
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: "echo left-by-the-shell; exit 7",
      run_in_background: true,
    }]]),
    // Time for the background shell to end before it is read.
    chatToolCalls([["bash", { command: "sleep 1" }]]),
  ], (request) => {
    const id = shellIdIn(request);
    if (!read && id) {
      read = true;
      return chatToolCalls([["bash_output", { shell_id: id }]]);
    }
    return chatToolCalls([["task_done", {}]]);
  });
  try {
    const r = await runMocked(mock, "run one in the background", repo, {
      cwd: home,
      env: { HOME: home },
      extra: ["--approval", "never"],
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(read, "the model read the shell");
    const lines = (await Deno.readTextFile(seen)).split("\n").filter((l) => l.trim() !== "");
    assert.equal(lines.length, 1, "the hook ran once, for the one bash_output call");
    const event = JSON.parse(lines[0]);
    assert.equal(event.hook_event_name, "PostToolUse");
    assert.equal(event.tool_name, "bash_output");
    assert.match(event.tool_input.shell_id, /^bg-[0-9a-f]+$/);
    const response = JSON.stringify(event.tool_response);
    assert.match(response, /status: exited \(exit code 7\)/);
    assert.match(response, /left-by-the-shell/);
  } finally {
    await mock.close();
  }
});
