/**
 * How a conversation starts: bare `deft` on a terminal, `deft "PROMPT"`, `deft interactive
 * "PROMPT"`, and `--resume` / `/resume` with the session picker; off a terminal bare `deft` stays a
 * usage error.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

const ENTER = "\r";
const CTRL_D = "\x04";
const UP = "\x1b[A";

/** A home whose user config points at `mock`, so bare `deft` needs no flags. */
async function place(mock: MockLLM): Promise<Record<string, string>> {
  const home = await tempDirUntilExit("deft-home-");
  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/.config/deft/config.yaml`,
    [
      "model_providers:",
      "  mock:",
      "    provider: openai_compatible",
      `    base_url: ${mock.url}/v1`,
      "    api_key: k",
      "models:",
      "  main: { model_provider: mock, model: mock-model }",
      "agents:",
      "  deft_agent: { model: main, max_steps: 5 }",
      "",
    ].join("\n"),
  );
  return { HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_STATE_HOME: `${home}/state` };
}

// deno-lint-ignore no-explicit-any
const lastUser = (req: any): string =>
  // deno-lint-ignore no-explicit-any
  req.body.messages.filter((m: any) => m.role === "user").at(-1).content;

Deno.test('entry points (pty): bare deft opens the conversation; deft "PROMPT" and deft interactive "PROMPT" send it first', async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatText("Hi there."), chatText("Up."), chatText("Hello back.")]);
  const env = await place(mock);
  try {
    const bare = await runDeftInPty([], [
      { expect: "deft interactive: [\\s\\S]*deft> ", send: "hi" + ENTER },
      { expect: "Hi there\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env });
    assert.equal(bare.failed, null, plain(bare.output));
    assert.equal(bare.code, 0);

    const task = await runDeftInPty(["what is up"], [
      { expect: "Up\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env });
    assert.equal(task.failed, null, plain(task.output));
    assert.match(plain(task.output), /deft> what is up\n/, "the first prompt is shown as typed");
    assert.match(lastUser(mock.requests[1]), /\[Task\]:\nwhat is up/);

    const named = await runDeftInPty(["interactive", "say hello", "--approval", "never"], [
      { expect: "Hello back\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env });
    assert.equal(named.failed, null, plain(named.output));
    assert.match(plain(named.output), /approval: never/, "options after the prompt still apply");
    assert.match(lastUser(mock.requests[2]), /\[Task\]:\nsay hello/);
  } finally {
    await mock.close();
  }
});

Deno.test("entry points off a terminal: bare deft prints usage (exit 2); a mistyped command stays an error; a subcommand stays one", async () => {
  const repo = await makeBuggyRepo();
  const bare = await runDeft([], { cwd: repo });
  assert.equal(bare.code, 2);
  assert.match(bare.stderr, /Usage: deft/);
  const typo = await runDeft(["sesions"], { cwd: repo });
  assert.equal(typo.code, 2, typo.stderr);
  assert.match(typo.stderr, /unknown command 'sesions'[\s\S]*sessions/);
  const sessions = await runDeft(["sessions", "-w", repo], { cwd: repo });
  assert.equal(sessions.code, 0, sessions.stderr);
  assert.match(sessions.stderr, /no sessions recorded/);
});

Deno.test("resume picker (pty): --resume with no id lists the sessions (date, status, first prompt, last reply, sanitised); a number or the arrows pick; /resume too", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatText("First done."),
    chatText("Second done."),
    chatText("We talked about the first task."),
    chatText("Back again."),
  ]);
  const env = await place(mock);
  try {
    for (const task of ["the first task \x1b[31mred", "the second task"]) {
      const r = await runDeft(["run", task], { cwd: repo, env });
      assert.equal(r.code, 0, r.stderr);
    }
    const r = await runDeftInPty(["interactive", "--resume"], [
      { expect: "resume which\\? \\(1-2[^>]*> ", send: "9" + ENTER },
      { expect: "not one of 1-2[\\s\\S]*> ", send: "2" + ENTER },
      { expect: "resumed session[\\s\\S]*deft> ", send: "what did we do?" + ENTER },
      { expect: "talked about the first task\\.[\\s\\S]*deft> ", send: "/resume" + ENTER },
      { expect: "resume which\\? \\(1-3[^>]*> ", send: UP },
      { expect: "1\\. ", send: ENTER },
      { expect: "resumed session[\\s\\S]*deft> ", send: "again" + ENTER },
      { expect: "Back again\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // Newest last, next to the prompt; the escape in a prompt is shown, not obeyed.
    assert.match(
      out,
      /Sessions \(newest last\):\n {3}2\. \d{4}-\d\d-\d\d \d\d:\d\d {2}completed\s+the first task ␛\[31mred {2}→ First done\.\n {3}1\. .*completed\s+the second task {2}→ Second done\.\n/,
    );
    assert.ok(!r.output.includes("\x1b[31mred"), "the raw escape never reaches the terminal");
    // Picked 2: the first task's conversation goes on.
    const sent = mock.requests[2].body.messages;
    assert.match(sent[1].content, /the first task/);
    assert.equal(lastUser(mock.requests[2]), "what did we do?");
    // /resume, ↑ then Enter: the newest session (the one just recorded) goes on.
    const again = mock.requests[3].body.messages;
    assert.equal(lastUser(mock.requests[3]), "again");
    assert.ok(again.some((m: { content: string }) => m.content === "what did we do?"), "newest");
  } finally {
    await mock.close();
  }
});

Deno.test("resume picker (pty): ↑/↓ move a mark over the list and Enter takes the marked session; no row is ever put on the answer line", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatText("Alpha done."),
    chatText("Beta done."),
    chatText("Gamma done."),
    chatText("Back on beta."),
  ]);
  const env = await place(mock);
  try {
    for (const task of ["the alpha task", "the beta task", "the gamma task"]) {
      const r = await runDeft(["run", task], { cwd: repo, env });
      assert.equal(r.code, 0, r.stderr);
    }
    const DOWN = "\x1b[B";
    const r = await runDeftInPty(["-r"], [
      { expect: "resume which\\? \\(1-3[^>]*> ", send: UP },
      { expect: "› +1\\. [^\\n]*gamma task", send: UP },
      { expect: "› +2\\. [^\\n]*beta task", send: UP },
      { expect: "› +3\\. [^\\n]*alpha task", send: DOWN },
      { expect: "› +2\\. [^\\n]*beta task", send: ENTER },
      { expect: "resumed session[\\s\\S]*deft> ", send: "where were we?" + ENTER },
      { expect: "Back on beta\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env, size: { cols: 100, rows: 30 } });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // The answer line stays what was typed (nothing): no row was pasted after the prompt.
    // deno-lint-ignore no-control-regex
    const pasted = /resume which\?[^\n]*> (?:\x1b\[[0-9;]*[A-Za-z])*[ ›]*\d+\. \d{4}-/;
    assert.doesNotMatch(r.output, pasted);
    const sent = mock.requests[3].body.messages;
    assert.match(sent[1].content, /the beta task/);
    assert.equal(lastUser(mock.requests[3]), "where were we?");
  } finally {
    await mock.close();
  }
});
