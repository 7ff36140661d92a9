/**
 * Headless `deft run` as its peers behave: a reply in words (no tool call) ends the run with that
 * answer, unless --must-patch asks for an edit; and the task can come on stdin.
 */
import assert from "node:assert/strict";
import { mockRunArgs, runDeft, runMocked, trustedHome } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { plain, type PtyRun, runDeftInPty } from "../../helpers/pty.ts";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { tempDir } from "../../helpers/temp.ts";

const ANSWER = "x is the sum of a and b, computed in calc.py.";

async function setup(replies: Parameters<typeof MockLLM.start>[0]) {
  const repo = await makeBuggyRepo();
  const home = await trustedHome();
  const mock = MockLLM.start(replies);
  return {
    repo,
    home,
    mock,
    [Symbol.asyncDispose]: async () => {
      await mock.close();
      await Deno.remove(repo, { recursive: true });
      await Deno.remove(home, { recursive: true });
    },
  };
}

/** `deft run` without a task argument (the task comes from `-f` or stdin). */
function runWithoutTask(
  t: { mock: MockLLM; repo: string; home: string },
  extra: string[],
  stdin?: string,
) {
  // mockRunArgs puts the task right after `run`; drop it.
  const args = mockRunArgs(t.mock, "-", t.repo, { extra: ["--json", ...extra] });
  args.splice(1, 1);
  return runDeft(args, { cwd: t.home, env: { HOME: t.home }, stdin });
}

function lastUserMessage(mock: MockLLM, request: number): string {
  const messages = mock.requests[request].body.messages as { role: string; content: string }[];
  return messages.findLast((m) => m.role === "user")!.content;
}

Deno.test("run: a text-only reply ends the run after one step, exit 0, the answer in --json and last", async () => {
  await using t = await setup([chatText(ANSWER), chatText(ANSWER)]);
  const r = await runMocked(t.mock, "explain x", t.repo, {
    extra: ["--json"],
    cwd: t.home,
    env: { HOME: t.home },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(t.mock.requests.length, 1, "no nudge after the answer");
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.success, true);
  assert.equal(summary.exit_code, 0);
  assert.equal(summary.steps, 1);
  assert.equal(summary.final_result, ANSWER);

  // Text output: the answer is the last thing printed on stdout.
  const text = await runMocked(t.mock, "explain x", t.repo, { cwd: t.home, env: { HOME: t.home } });
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout, `${ANSWER}\n`, "the answer, alone, on stdout");
  assert.equal(t.mock.requests.length, 2);
});

Deno.test("run --must-patch: a text-only reply is still nudged to call a tool", async () => {
  await using t = await setup([chatText("hm"), chatText("hm"), chatText("hm")]);
  const r = await runMocked(t.mock, "explain x", t.repo, {
    extra: ["--json", "--must-patch", "--max-steps", "3"],
    cwd: t.home,
    env: { HOME: t.home },
  });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(t.mock.requests.length, 3);
  assert.match(lastUserMessage(t.mock, 1), /You did not call a tool/);
  assert.match(JSON.parse(r.stdout).final_result, /exceeded maximum steps/);
});

Deno.test("run: a task piped in with no task argument is the task", async () => {
  await using t = await setup([chatToolCalls([["task_done", {}]], "done")]);
  const r = await runWithoutTask(t, [], "explain the piped task\n");
  assert.equal(r.code, 0, r.stderr);
  assert.match(lastUserMessage(t.mock, 0), /explain the piped task/);
});

Deno.test("run -f - reads the task from stdin (deft run -f - < file)", async () => {
  await using t = await setup([chatText(ANSWER)]);
  const file = `${t.home}/task.md`;
  await Deno.writeTextFile(file, "# Task\n\nexplain x from the file\n");
  const r = await runWithoutTask(t, ["-f", "-"], await Deno.readTextFile(file));
  assert.equal(r.code, 0, r.stderr);
  assert.match(lastUserMessage(t.mock, 0), /explain x from the file/);
  assert.equal(JSON.parse(r.stdout).final_result, ANSWER);
});

Deno.test("run: an empty stdin is a usage error (exit 2) that says how to give the task", async () => {
  await using t = await setup([chatText("never asked")]);
  for (const extra of [[], ["-f", "-"]]) {
    const r = await runWithoutTask(t, extra, "  \n");
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /empty stdin|stdin was empty/);
    assert.match(r.stderr, /deft run "fix the bug"/);
    assert.match(r.stderr, /deft run -f - < task\.md/);
    assert.equal(JSON.parse(r.stdout).exit_code, 2);
  }
  // No stdin at all (runDeft closes it at once) is the same error, not a hang.
  const none = await runWithoutTask(t, []);
  assert.equal(none.code, 2, none.stderr);
  assert.equal(t.mock.requests.length, 0);
});

Deno.test("run: a task both as an argument and with -f - is refused", async () => {
  await using t = await setup([chatText("never asked")]);
  const r = await runMocked(t.mock, "explain x", t.repo, {
    extra: ["-f", "-"],
    cwd: t.home,
    env: { HOME: t.home },
    stdin: "another task",
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /either as an argument or with --file/);
});

/** Runs `deft ARGS` in a pty with its stdout sent to `stdoutFile` (stderr stays the terminal). */
async function runInPtyStdoutToFile(args: string[], cwd: string, home: string, stdoutFile: string) {
  await using scriptDir = await tempDir("deft-pty-");
  const script = `${scriptDir.path}/script.json`;
  const argv = [Deno.execPath(), "run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args];
  await Deno.writeTextFile(
    script,
    JSON.stringify({
      argv: ["/bin/sh", "-c", 'out="$1"; shift; exec "$@" > "$out"', "sh", stdoutFile, ...argv],
      cwd,
      env: { NO_COLOR: "1", DENO_DIR: denoDir(), TERM: "xterm", HOME: home },
      steps: [],
      timeout: 90,
    }),
  );
  const out = await new Deno.Command("python3", {
    args: [`${REPO_ROOT}tests/helpers/pty_drive.py`, script],
    stdout: "piped",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)) as PtyRun;
}

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

Deno.test("run on a terminal: the streamed answer shows once; with stdout piped it still lands on stdout", async () => {
  await using t = await setup([chatText(ANSWER), chatText(ANSWER)]);
  // stdout and stderr are the terminal: the live console streamed it, no second copy.
  const args = mockRunArgs(t.mock, "explain x", t.repo);
  const r = await runDeftInPty(args, [], { cwd: t.home, env: { HOME: t.home } });
  const screen = plain(r.output);
  assert.equal(r.code, 0, screen);
  assert.equal(count(screen, ANSWER), 1, screen);
  assert.match(screen, /completed/);

  // stderr is the terminal, stdout a file (a script's pipe): the answer is there, alone.
  const file = `${t.home}/answer.txt`;
  const piped = await runInPtyStdoutToFile(args, t.home, t.home, file);
  const shown = plain(piped.output);
  assert.equal(piped.code, 0, shown);
  assert.equal(count(shown, ANSWER), 1, "streamed on the terminal");
  assert.equal(await Deno.readTextFile(file), `${ANSWER}\n`);
  assert.equal(t.mock.requests.length, 2);
});
