/**
 * The parent–child link of the `Task` tool (issue 54): the parent's trajectory names the child's
 * file on the Task call, the child's names its parent, and `deft report` over the parent shows
 * the child's own steps nested in that call (asserted in headless Chromium).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Chromium } from "../../helpers/chromium.ts";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM, type MockRequest } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";
import { taskConfigYaml } from "../../helpers/subagent.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function firstUserText(req: MockRequest): string {
  const first = req.body.messages.find((m: Json) => m.role === "user");
  return typeof first.content === "string" ? first.content : JSON.stringify(first.content);
}

const toolResults = (req: MockRequest) =>
  req.body.messages.filter((m: Json) => m.role === "tool").length;

Deno.test("task report: the parent's trajectory links the child's, which names its parent; the report nests the child's steps", async () => {
  const repo = await makeBuggyRepo();
  await using dir = await tempDir("deft-home-");
  await using tmp = await tempDir("deft-tmp-");
  const mark = `child-mark-${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const mock = MockLLM.start([], (req) => {
    const text = firstUserText(req);
    if (text.includes("CHILD-WORK")) {
      return toolResults(req) === 0
        ? chatToolCalls([["bash", { command: `echo ${mark}` }]])
        : chatText("CHILD ANSWER: looked around");
    }
    return toolResults(req) === 0
      ? chatToolCalls([["task", { description: "look", prompt: "CHILD-WORK look" }]])
      : chatText("parent done");
  });
  const env = {
    HOME: dir.path,
    XDG_CONFIG_HOME: `${dir.path}/.config`,
    XDG_STATE_HOME: `${dir.path}/state`,
    TMPDIR: tmp.path,
  };
  await Deno.mkdir(`${dir.path}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${dir.path}/.config/deft/config.yaml`,
    taskConfigYaml(mock.url),
  );
  const parentFile = join(dir.path, "parent.json");
  try {
    const ran = await runDeft(
      ["run", "PARENT", "-w", repo, "--approval", "never", "-t", parentFile],
      { cwd: dir.path, env },
    );
    assert.equal(ran.code, 0, ran.stderr);
  } finally {
    await mock.close();
  }

  // The link, both ways.
  const parent = JSON.parse(await Deno.readTextFile(parentFile));
  const taskResult = parent.agent_steps.flatMap((s: Json) => s.tool_results)
    .find((r: Json) => r.name === "Task");
  const link = taskResult.subagent;
  assert.equal(typeof link?.trajectory, "string", JSON.stringify(taskResult));
  const child = JSON.parse(await Deno.readTextFile(link.trajectory));
  assert.equal(child.session_id, link.session_id);
  assert.deepEqual(child.parent, { session_id: parent.session_id, trajectory: parentFile });

  // The report over the parent alone shows the child's steps inside the Task call.
  const file = join(dir.path, "run.html");
  const made = await runDeft(["report", parentFile, "-o", file], { cwd: dir.path, env });
  assert.equal(made.code, 0, made.stderr);
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  const page = await browser.open(pathToFileURL(file).href, { scripts: true });
  assert.deepEqual(page.log.errors, []);
  const nested = await browser.evaluate<{ tool: string; text: string; steps: number }[]>(
    page.session,
    `[...document.querySelectorAll("details.child")].map((c) => ({
      tool: c.closest("details.call")?.querySelector(".tool")?.innerText ?? "",
      text: c.textContent,
      steps: c.querySelectorAll(".step").length,
    }))`,
  );
  assert.equal(nested.length, 1, JSON.stringify(nested));
  const [shown] = nested;
  assert.equal(shown.tool.toLowerCase(), "task", "nested in the Task call");
  assert.ok(shown.text.includes(link.session_id), shown.text);
  assert.ok(shown.text.includes(`echo ${mark}`), "the child's own call is shown");
  assert.ok(shown.text.includes("CHILD ANSWER: looked around"), "and its final answer");
  assert.ok(shown.text.includes(`a child agent of session ${parent.session_id}`), shown.text);
  assert.equal(shown.steps, 2, "the child's two steps");
});
