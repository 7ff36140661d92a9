/**
 * The composer of `deft interactive` on a real pseudo-terminal: bracketed paste (a paste of any
 * size is one prompt, shown folded; a paste during a question never answers it; the terminal's
 * paste mode is turned off at exit), `!command` in the session's shell with no model call, and Esc
 * stopping a turn.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { eventually, pidsByCmdline } from "../../helpers/bash.ts";
import { sessionEnv as home } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";
const ESC = "\x1b";

/** What a terminal sends for a bracketed paste of `text` (its newlines as carriage returns). */
function paste(text: string): string {
  return `\x1b[200~${text.replace(/\n/g, "\r")}\x1b[201~`;
}

// deno-lint-ignore no-explicit-any
function lastUser(body: any): string {
  // deno-lint-ignore no-explicit-any
  return body.messages.filter((m: any) => m.role === "user").at(-1).content;
}

Deno.test("interactive (pty): a 200-line paste is one prompt, shown folded, sent whole on Enter", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const lines = Array.from({ length: 200 }, (_, i) => `line ${i + 1} of the paste`);
  const mock = MockLLM.start([chatText("Got it.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "look at this: " + paste(lines.join("\n") + "\n") },
      { expect: "\\[pasted 200 lines\\]", send: ENTER, delay: 0.5 },
      { expect: "Got it\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.equal(mock.requests.length, 1, "one prompt, one model call");
    assert.ok(lastUser(mock.requests[0].body).includes(`look at this: ${lines.join("\n")}\n`));
    // Folded on the screen, never drawn line by line.
    assert.match(out, /deft> look at this: \[pasted 200 lines\]/);
    assert.doesNotMatch(out, /line 150 of the paste/);
    // Bracketed paste on at the start, off again at the end.
    assert.ok(r.output.includes("\x1b[?2004h"), "bracketed paste was turned on");
    assert.ok(r.output.lastIndexOf("\x1b[?2004l") > r.output.lastIndexOf("\x1b[?2004h"));
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): a paste during an approval never answers it; it waits for the next prompt", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "touch pasted_yes" }]]),
    chatText("Stopped."),
    chatText("Read the paste."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "go" + ENTER },
      { expect: "\\$ touch pasted_yes[\\s\\S]*approve> ", send: paste("y\nsecond line\n") },
      { expect: "kept for the next prompt", send: "n" + ENTER, delay: 0.5 },
      { expect: "→ no" },
      { expect: "Stopped\\.[\\s\\S]*deft> [^\\n]*\\[pasted 2 lines\\]", send: ENTER, delay: 0.5 },
      { expect: "Read the paste\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    await assert.rejects(Deno.stat(`${repo}/pasted_yes`), Deno.errors.NotFound);
    assert.match(lastUser(mock.requests[2].body), /(^|\n)y\nsecond line\n*$/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): !git status runs in the session's shell without a model call; its output is the next prompt's context", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  await Deno.writeTextFile(`${repo}/untracked_marker.txt`, "x\n");
  const mock = MockLLM.start([chatText("Seen.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "!git status --short" + ENTER },
      { expect: "exit code 0[\\s\\S]*deft> ", send: "what is new?" + ENTER, delay: 0.3 },
      { expect: "Seen\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(out, /\?\? untracked_marker\.txt/);
    assert.equal(mock.requests.length, 1, "the ! command made no model call");
    const prompt = lastUser(mock.requests[0].body);
    assert.match(prompt, /<user-shell-command>[\s\S]*ran this command[\s\S]*\$ git status --short/);
    assert.match(prompt, /\?\? untracked_marker\.txt[\s\S]*what is new\?\n*$/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): Esc stops a running command's turn and leaves no process", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "sleep 119.37" }]]),
    chatText("After."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "go" + ENTER },
      { expect: "sleep 119\\.37", send: ESC, delay: 1.5 },
      { expect: "interrupted: stopping the turn" },
      { expect: "deft> ", send: "next" + ENTER, delay: 0.5 },
      { expect: "After\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { args: ["--approval", "never"], cwd: env.HOME, env, timeoutSeconds: 60 });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // No process of the command is left (the sandbox has its own pid numbers: look by argv).
    const left = async () => (await pidsByCmdline("sleep 119.37")).length === 0;
    assert.ok(await eventually(left, 5000), "the command's process was left running");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): @src/calc.py completes on Tab and attaches the file; a path outside the workspace or a FIFO is refused", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  await Deno.mkdir(`${repo}/src`);
  await Deno.writeTextFile(`${repo}/src/calc.py`, "def mul(a, b):\n    return a * b\n");
  await Deno.writeTextFile(`${repo}/.gitignore`, "*_ignored.py\n");
  await Deno.writeTextFile(`${repo}/src/calc_ignored.py`, "never listed\n");
  const fifo = new Deno.Command("mkfifo", { args: [`${repo}/pipe`] });
  assert.ok((await fifo.output()).success);
  const mock = MockLLM.start([chatText("Attached.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "explain @src/ca" },
      { expect: "@src/ca", send: "\t", delay: 0.3 },
      { expect: "lc\\.py", send: " and @/etc/hostname and @pipe" + ENTER, delay: 0.5 },
      { expect: "Attached\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(out, /attached @src\/calc\.py \(2 line\(s\), 32 bytes\)/);
    assert.match(out, /not attached: @\/etc\/hostname: it is outside the workspace/);
    assert.match(out, /not attached: @pipe: it is not a regular file/);
    const prompt = lastUser(mock.requests[0].body);
    assert.match(prompt, /explain @src\/calc\.py and @\/etc\/hostname and @pipe/);
    assert.match(
      prompt,
      /<attached-file path="src\/calc\.py">\ndef mul\(a, b\):\n {4}return a \* b\n<\/attached-file>/,
    );
    assert.equal(prompt.match(/<attached-file/g)?.length, 1);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): @shot.png sends the image in the provider's own format; a fake image is refused", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const png = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4);
  await Deno.writeFile(`${repo}/shot.png`, png);
  await Deno.writeTextFile(`${repo}/fake.png`, "not an image\n");
  const mock = MockLLM.start([chatText("A picture.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "what is in @shot.png and @fake.png?" + ENTER },
      { expect: "A picture\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(out, /attached image @shot\.png \(image\/png, 12 bytes\)/);
    assert.match(out, /not attached: @fake\.png: it is not a PNG, JPEG, GIF or WebP image/);
    // deno-lint-ignore no-explicit-any
    const parts = mock.requests[0].body.messages.flatMap((m: any) =>
      Array.isArray(m.content) ? m.content : []
    );
    // deno-lint-ignore no-explicit-any
    const image = parts.find((p: any) => p.type === "image_url");
    assert.equal(
      image?.image_url.url,
      `data:image/png;base64,${btoa(String.fromCharCode(...png))}`,
    );
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): Ctrl-R brings back the earlier prompt holding what is typed", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([chatText("One."), chatText("Two."), chatText("Three.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "tell me about zebras" + ENTER },
      { expect: "One\\.[\\s\\S]*deft> ", send: "and lions" + ENTER, delay: 0.3 },
      { expect: "Two\\.[\\s\\S]*deft> ", send: "zeb\x12", delay: 0.3 },
      { expect: "zebras", send: ENTER, delay: 0.3 },
      { expect: "Three\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(lastUser(mock.requests[2].body), /^tell me about zebras\n*$/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): Ctrl-R then typing searches as each letter comes; Backspace widens it", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([chatText("One."), chatText("Two."), chatText("Three.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "tell me about zebras" + ENTER },
      { expect: "One\\.[\\s\\S]*deft> ", send: "and zebus too" + ENTER, delay: 0.3 },
      // `zebu` finds the newest prompt; `zebr` (after a Backspace) the older one.
      { expect: "Two\\.[\\s\\S]*deft> ", send: "\x12", delay: 0.3 },
      { expect: "\\(search: \\)> ", send: "zebu", delay: 0.3 },
      { expect: "\\(search: zebu\\)> and zebus too", send: "\x7f", delay: 0.3 },
      { expect: "\\(search: zeb\\)> ", send: "r", delay: 0.3 },
      { expect: "\\(search: zebr\\)> tell me about zebras", send: ENTER, delay: 0.3 },
      { expect: "Three\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env, timeoutSeconds: 30 });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(lastUser(mock.requests[2].body), /^tell me about zebras\n*$/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): the line typed during a turn is drawn under the output, edited, and sent after the turn", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "sleep 4.31" }]]),
    chatStream(chatText("First line of the answer.\nSecond line of the answer."), 150),
    chatText("Next answered."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "go" + ENTER },
      // Typed while the command runs: visible at once, then edited with Backspace.
      { expect: "sleep 4\\.31", send: "secnd qestion", delay: 0.5 },
      { expect: "next> secnd qestion", send: "\x7f".repeat(12), delay: 0.2 },
      { expect: "next> s\\b", send: "econd question", delay: 0.2 },
      { expect: "next> second question" },
      // The answer streams in above it; the typed line comes back at the prompt after the turn,
      // the cursor at its end (what is typed now goes after it).
      {
        expect: "Second line of the answer\\.[\\s\\S]*deft> second question",
        send: "?" + ENTER,
        delay: 0.5,
      },
      { expect: "Next answered\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { args: ["--approval", "never"], cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // Drawn during the turn: before the command's result and the answer.
    const typed = out.indexOf("next> second question");
    assert.ok(typed >= 0 && typed < out.indexOf("✓ ok"), out);
    assert.ok(out.indexOf("next> secnd qestion") < out.indexOf("✓ ok"), out);
    // Each output chunk erased the composer line before it was written: the composer's text never
    // runs on into the console's lines.
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(r.output, /next> [^\r\n\x1b]*(✓|First line|Second line|step)/);
    assert.equal(mock.requests.length, 3);
    assert.match(lastUser(mock.requests[2].body), /^second question\?\n*$/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): a line being typed when an approval comes up is not its answer; it comes back after", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([
    { ...chatToolCalls([["bash", { command: "touch typed_yes" }]]), delayMs: 2500 },
    chatText("Refused then."),
    chatText("Draft received."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "go" + ENTER },
      { expect: "waiting for the model", send: "y draft words", delay: 0.3 },
      { expect: "next> y draft words" },
      // The question owns the screen: its answer is only what is typed after it.
      { expect: "\\$ touch typed_yes[\\s\\S]*approve> ", send: "n" + ENTER, delay: 0.5 },
      { expect: "→ no" },
      { expect: "Refused then\\.[\\s\\S]*deft> y draft words", send: ENTER, delay: 0.5 },
      { expect: "Draft received\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    await assert.rejects(Deno.stat(`${repo}/typed_yes`), Deno.errors.NotFound);
    assert.doesNotMatch(out, /approve> [^\n]*draft/);
    assert.equal(mock.requests.length, 3);
    assert.match(lastUser(mock.requests[2].body), /^y draft words\n*$/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): Esc twice on an empty composer opens the /rewind picker; one Esc does not", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "echo changed > calc.py" }]]),
    chatText("Changed it."),
    chatText("Back at the start."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "change calc" + ENTER },
      // One Esc says what a second one does, and opens nothing.
      { expect: "Changed it\\.[\\s\\S]*deft> ", send: ESC, delay: 0.5 },
      { expect: "Esc again to rewind[\\s\\S]*deft> ", delay: 2 },
      // Two in a row open the picker: back to turn 0, files and conversation.
      { send: ESC, delay: 0.2 },
      { send: ESC, delay: 0.2 },
      { expect: "rewind to which checkpoint\\? \\(number; empty: none\\)> ", send: "0" + ENTER },
      { expect: "restore: files, conversation or both\\?[^\\n]*> ", send: ENTER, delay: 0.3 },
      { expect: "rewound[\\s\\S]*deft> ", send: "where are we" + ENTER, delay: 0.3 },
      { expect: "Back at the start\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { args: ["--approval", "never"], cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // The single Esc opened no picker: the picker's question shows once.
    assert.equal(out.match(/rewind to which checkpoint\?/g)?.length, 1, out);
    assert.match(out, /Checkpoints \(number, time UTC, files changed, label\):/);
    assert.match(await Deno.readTextFile(`${repo}/calc.py`), /def /, "the file is back");
    // The conversation went back too: the last request holds only the new prompt.
    // deno-lint-ignore no-explicit-any
    const users = mock.requests[2].body.messages.filter((m: any) => m.role === "user");
    assert.equal(users.length, 1);
    assert.match(users[0].content, /where are we/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): a quick double Esc (both bytes in one read) opens the /rewind picker", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([chatText("Done once.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "hello" + ENTER },
      // A human double-tap is 100-250 ms: the terminal hands both Escs over together.
      { expect: "Done once\\.[\\s\\S]*deft> ", send: ESC + ESC, delay: 0.5 },
      { expect: "rewind to which checkpoint\\? \\(number; empty: none\\)> ", send: ENTER },
      { expect: "deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env, timeoutSeconds: 30 });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(out, /Checkpoints \(number, time UTC, files changed, label\):/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): the /rewind picker names a turn by what was typed, not by the shell output and file sent with it", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([chatText("Read it.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "!echo shell-said" + ENTER },
      { expect: "shell-said[\\s\\S]*deft> ", send: "look at @calc.py" + ENTER },
      { expect: "Read it\\.[\\s\\S]*deft> ", send: "/rewind" + ENTER, delay: 0.3 },
      { expect: "rewind to which checkpoint\\? \\(number; empty: none\\)> ", send: ENTER },
      { expect: "deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env, timeoutSeconds: 30 });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    // The model got the shell output and the file; the picker shows the prompt as typed.
    assert.match(JSON.stringify(mock.requests[0].body), /user-shell-command[\s\S]*attached-file/);
    assert.match(out, /^ {4}1\. [\d:]+ +\d+ file\(s\) {2}look at @calc\.py$/m);
    assert.doesNotMatch(out, /file\(s\) {2}<user-shell-command>/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): `!` alone enters shell mode: lines run without `!` until Esc, then go to the model", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([chatText("Back with the model.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "!" + ENTER },
      { expect: "shell mode: [\\s\\S]*deft !> ", send: "echo first-$((6*7))" + ENTER, delay: 0.3 },
      { expect: "first-42[\\s\\S]*exit code 0[\\s\\S]*deft !> ", send: "ls" + ENTER, delay: 0.3 },
      { expect: "check\\.py[\\s\\S]*exit code 0[\\s\\S]*deft !> ", send: ESC, delay: 0.3 },
      {
        expect: "shell mode off\\)\\s*(?:\\x1b\\[[0-9;]*[A-Za-z]\\s*)*deft> ",
        send: "echo not-a-command" + ENTER,
        delay: 0.3,
      },
      { expect: "Back with the model\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: env.HOME, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.equal(mock.requests.length, 1, "only the line after shell mode reached the model");
    const prompt = lastUser(mock.requests[0].body);
    assert.match(prompt, /\$ echo first-\$\(\(6\*7\)\)\nfirst-42/);
    assert.match(prompt, /\$ ls\n[\s\S]*calc\.py/);
    assert.match(prompt, /echo not-a-command\n*$/);
    assert.doesNotMatch(out, /^not-a-command$/m, "the line after Esc was not run");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): in the /rewind picker ↑ marks the newest checkpoint's row and Enter takes it; no row is put on the answer line", async () => {
  const repo = await makeBuggyRepo();
  const env = await home();
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "a - b",
      new_str: "a + b",
    }]]),
    chatText("Changed it."),
    chatText("Again."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "change calc" + ENTER },
      { expect: "Changed it\\.[\\s\\S]*deft> ", send: "and again" + ENTER },
      { expect: "Again\\.[\\s\\S]*deft> ", send: "/rewind" + ENTER },
      { expect: "rewind to which checkpoint\\? \\(number; empty: none\\)> ", send: "\x1b[A" },
      { expect: "› +2\\. ", send: "\x1b[A" },
      { expect: "› +1\\. ", send: ENTER },
      { expect: "restore: files, conversation or both\\?[^\\n]*> ", send: "files" + ENTER },
      { expect: "deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { args: ["--approval", "never"], cwd: env.HOME, env, size: { cols: 100, rows: 30 } });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // deno-lint-ignore no-control-regex
    const pasted = /which checkpoint\?[^\n]*> (?:\x1b\[[0-9;]*[A-Za-z])*[ ›]*\d+\. \d\d:/;
    assert.doesNotMatch(r.output, pasted);
    // ↑ twice: checkpoint 1, the row above the newest.
    assert.match(out, /rewound the files to checkpoint 1 \(change calc\)/);
  } finally {
    await mock.close();
  }
});
