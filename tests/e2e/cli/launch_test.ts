/**
 * The launch lines other agents' users type: `deft -p "TASK"` and `deft exec "TASK"` run headless
 * as `deft run`; `-C DIR` names the workspace; `deft -c` and `deft resume` go on with the user's
 * conversation, never a `/init` helper; the picker searches; `/compact` shows progress and keeps
 * what is typed meanwhile; `/init` times its own turn.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

/** A home (in `dir`) whose user config points at `mock`, so `deft` needs no model flags. */
async function home(dir: string, mock: MockLLM): Promise<Record<string, string>> {
  await Deno.mkdir(`${dir}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/.config/deft/config.yaml`,
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
  return { HOME: dir, XDG_CONFIG_HOME: `${dir}/.config`, XDG_STATE_HOME: `${dir}/state` };
}

// deno-lint-ignore no-explicit-any
type Message = any;
const userTexts = (i: number, mock: MockLLM): string[] =>
  mock.requests[i].body.messages.filter((m: Message) => m.role === "user").map((m: Message) =>
    m.content
  );

Deno.test("launch: deft -p and deft exec run headless as deft run; -C names the workspace; misspellings get a suggestion", async () => {
  await using dir = await tempDir();
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatText("Answer one."),
    chatText("Answer two."),
    chatText("Three."),
  ]);
  try {
    const env = await home(dir.path, mock);
    const print = await runDeft(["-p", "what is up"], { cwd: repo, env });
    assert.equal(print.code, 0, print.stderr);
    assert.equal(print.stdout, "Answer one.\n");
    assert.match(userTexts(0, mock).at(-1)!, /what is up/);

    const exec = await runDeft(["exec", "say more"], { cwd: repo, env });
    assert.equal(exec.code, 0, exec.stderr);
    assert.equal(exec.stdout, "Answer two.\n");

    // -C DIR from another folder: the session is the repository's.
    const cd = await runDeft(["-C", repo, "-p", "where am I"], { cwd: dir.path, env });
    assert.equal(cd.code, 0, cd.stderr);
    const listed = await runDeft(["sessions", "-w", repo, "--json"], { cwd: dir.path, env });
    const tasks = JSON.parse(listed.stdout).map((s: { task: string }) => s.task);
    assert.deepEqual(tasks.slice(0, 3), ["where am I", "say more", "what is up"]);

    const both = await runDeft(["-C", repo, "-w", dir.path, "-p", "x"], { cwd: repo, env });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /name two workspaces: give one/);
    const pick = await runDeft(["-p", "-r", "--", "go on"], { cwd: repo, env });
    assert.equal(pick.code, 2);
    assert.match(pick.stderr, /-p cannot pick a session from a list: give its id/);
    for (const [typed, meant] of [["exce", "exec"], ["resum", "resume"], ["sesions", "sessions"]]) {
      const typo = await runDeft([typed], { cwd: repo, env });
      assert.equal(typo.code, 2, typo.stderr);
      assert.match(
        typo.stderr,
        new RegExp(`unknown command '${typed}'\\n\\(Did you mean ${meant}\\?\\)`),
      );
    }
    // A mistyped command with its own arguments is still a mistyped command.
    const withArgs = await runDeft(["sesions", "-w", repo, "--json"], { cwd: repo, env });
    assert.match(withArgs.stderr, /unknown (command 'sesions'|option '--json')/);
    const words = await runDeft(["sesions", "now"], { cwd: repo, env });
    assert.match(words.stderr, /unknown command 'sesions'\n\(Did you mean sessions\?\)/);
    const flag = await runDeft(["--continu"], { cwd: repo, env });
    assert.match(flag.stderr, /unknown option '--continu'\n\(Did you mean --continue\?\)/);
    assert.equal(mock.requests.length, 3, "no misspelling reached the model");
  } finally {
    await mock.close();
  }
});

Deno.test("launch (pty): after /init, deft -c resumes the user's conversation; deft resume lists no helper and searches; /init times its own turn", async () => {
  await using dir = await tempDir();
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatText("Noted PLUM."),
    chatText("Nothing to draft."),
    chatText("The word was PLUM."),
  ]);
  try {
    const env = await home(dir.path, mock);
    // Started from elsewhere with -C: the conversation is the repository's.
    const first = await runDeftInPty(["-C", repo, "remember the word PLUM"], [
      // Idle for 2.5 s before /init: a clock started at the first turn would count it.
      { expect: "Noted PLUM\\.[\\s\\S]*deft> ", send: "/init" + ENTER, delay: 2.5 },
      { expect: "Nothing to draft\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: dir.path, env });
    const out = plain(first.output);
    assert.equal(first.failed, null, out);
    const times = [...out.matchAll(/step\(s\), (\d+\.\d) s/g)].map((m) => Number(m[1]));
    assert.equal(times.length, 2, out);
    assert.ok(times[1] < 2, `/init's turn took ${times[1]} s by its closing line:\n${out}`);

    const again = await runDeftInPty(["-c"], [
      { expect: "resumed session[\\s\\S]*deft> ", send: "which word?" + ENTER },
      { expect: "The word was PLUM\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env });
    assert.equal(again.failed, null, plain(again.output));
    const sent = userTexts(2, mock);
    assert.match(sent[0], /remember the word PLUM/, "the user's conversation went on");
    assert.ok(!sent.some((t) => t.includes("AGENTS.md")), "not the /init helper's");
    assert.equal(sent.at(-1), "which word?");

    // Two conversations (the first, and its continuation); the /init helper is not offered.
    const picked = await runDeftInPty(["resume"], [
      { expect: "resume which\\? \\(1-2[^>]*> ", send: "noted" + ENTER },
      { expect: "holding 'noted'[\\s\\S]*resume which\\? \\(1-1[^>]*> ", send: "1" + ENTER },
      { expect: "resumed session[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env });
    const shown = plain(picked.output);
    assert.equal(picked.failed, null, shown);
    assert.ok(!/\d\. .*\/init/.test(shown), `a /init helper was offered:\n${shown}`);
    assert.match(
      shown,
      /holding 'noted' \(newest last\):\n {3}1\. .*remember the word PLUM {2}→ Noted PLUM\.\n/,
    );

    // deft sessions shows the helper under its conversation.
    const listed = await runDeft(["sessions"], { cwd: repo, env });
    assert.match(listed.stdout, /remember the word PLUM\n└ \S+ .*\(\/init helper\)\n/);
    assert.equal(listed.stdout.match(/\/init helper/g)?.length, 1, listed.stdout);
  } finally {
    await mock.close();
  }
});

Deno.test("/compact (pty): a spinner while the model summarises; a line typed meanwhile is queued and sent after", async () => {
  await using dir = await tempDir();
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatText("First answer."),
    { ...chatText("We said hello."), delayMs: 2500 },
    chatText("Got it."),
  ]);
  try {
    const env = await home(dir.path, mock);
    const r = await runDeftInPty(["say something"], [
      { expect: "First answer\\.[\\s\\S]*deft> ", send: "/compact" + ENTER },
      { expect: "/compact · the model summarises", send: "after compact" + ENTER },
      { expect: "Got it\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.match(out, /queued: after compact/);
    assert.match(out, /compacted the conversation/);
    assert.equal(userTexts(2, mock).at(-1), "after compact");
    // The conversation goes on in a new session after /compact: the picker offers that one only.
    const listed = await runDeft(["sessions", "--json"], { cwd: repo, env });
    const [after, before] = JSON.parse(listed.stdout);
    assert.equal(before.compacted_into, after.id, listed.stdout);
    assert.equal(after.task, "after compact");
  } finally {
    await mock.close();
  }
});

Deno.test("/compact (pty): Ctrl-C stops the summary on a terminal; the conversation is unchanged", async () => {
  await using dir = await tempDir();
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatText("First answer."),
    { ...chatText("Too late."), delayMs: 8000 },
    chatText("Still here."),
  ]);
  try {
    const env = await home(dir.path, mock);
    const r = await runDeftInPty(["say something"], [
      { expect: "First answer\\.[\\s\\S]*deft> ", send: "/compact" + ENTER },
      { expect: "/compact · the model summarises", send: "\x03", delay: 0.3 },
      { expect: "conversation is unchanged[\\s\\S]*deft> ", send: "go on" + ENTER },
      { expect: "Still here\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: repo, env, timeoutSeconds: 30 });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.match(out, /interrupted: the conversation is unchanged\./);
    // The next turn still holds the first exchange: nothing was replaced.
    assert.ok(userTexts(2, mock).some((t) => t.includes("say something")), "conversation kept");
  } finally {
    await mock.close();
  }
});
