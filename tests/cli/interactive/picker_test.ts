/**
 * The session picker: only a number on the list (or a line of it) resumes; another number asks
 * again; words narrow the list to the sessions that hold them.
 */
import assert from "node:assert/strict";
import { chooseSession } from "../../../src/cli/interactive/picker.ts";
import type { SessionSummary } from "../../../src/trajectory/conversation.ts";

function session(id: string, task: string, last_reply?: string): SessionSummary {
  return {
    id,
    path: `/state/${id}.json`,
    started: "2026-12-04T10:00:00Z",
    task,
    steps: 1,
    outcome: "completed",
    ...(last_reply && { last_reply }),
  };
}

const SESSIONS = [session("newest", "the second task"), session("oldest", "the first task")];

/** Answers `answers` in turn (null once they run out); records each question and what was said. */
function picker(answers: (string | null)[]) {
  const asked: string[] = [];
  const said: string[] = [];
  const reader = {
    select: (question: string) => {
      asked.push(question);
      return Promise.resolve(answers.length > 0 ? answers.shift()! : null);
    },
  };
  return { asked, said, pick: () => chooseSession(SESSIONS, reader, (t) => said.push(t)) };
}

Deno.test("picker: 0 and other numbers off the list are refused and asked again", async () => {
  for (const wrong of ["0", "00", "3", "99999999999999999999"]) {
    const p = picker([wrong, "2"]);
    assert.equal(await p.pick(), "oldest", `after ${JSON.stringify(wrong)} the next answer picks`);
    assert.equal(p.asked.length, 2, `${JSON.stringify(wrong)} was not asked again`);
    // Said above the list, shown again so it stays right above the question.
    assert.ok(
      p.said[1].startsWith(`'${wrong}' is not one of 1-2.\nType a number (1-2)`),
      `${JSON.stringify(wrong)}: ${p.said.join(" | ")}`,
    );
  }
});

Deno.test("picker: a number on the list or a line of it picks; an empty answer or end of input picks none", async () => {
  assert.equal(await picker(["1"]).pick(), "newest");
  assert.equal(await picker([" 2 "]).pick(), "oldest");
  const byLine = picker([]);
  await byLine.pick();
  const line = byLine.said[0].split("\n").find((l) => l.includes("the first task"))!;
  assert.equal(await picker([line]).pick(), "oldest");
  for (const none of ["", "  ", null]) {
    const p = picker([none]);
    assert.equal(await p.pick(), undefined);
    assert.deepEqual(p.said.slice(1), ["no session resumed."]);
  }
});

Deno.test("picker: words narrow the list to the sessions that hold them, in prompt or last reply; no match keeps it", async () => {
  const sessions = [
    session("c", "rename the parser", "Renamed Parser to Reader."),
    session("b", "fix the cache expiry", "The cache now expires after 60 s."),
    session("a", "explain the parser", "It reads tokens."),
  ];
  const said: string[] = [];
  const answers = ["nothing like this", "PARSER", "1"];
  const reader = { select: () => Promise.resolve(answers.shift() ?? null) };
  // "PARSER" keeps c and a (newest first): 1 is c again, renumbered within the matches.
  assert.equal(await chooseSession(sessions, reader, (t) => said.push(t)), "c");
  assert.match(said[1], /no session holds 'nothing like this'/);
  const narrowed = said[2].split("\n");
  assert.match(narrowed[0], /^Type a number \(1-2\)/);
  assert.match(narrowed[1], /Sessions holding 'PARSER'/);
  assert.equal(narrowed.length, 4, said[2]);
  assert.match(narrowed[2], /^ {3}2\. .*explain the parser {2}→ It reads tokens\.$/);
  assert.match(narrowed[3], /^ {3}1\. .*rename the parser/);
  // The last reply counts too.
  const byReply = ["expires", "1"];
  const replyReader = { select: () => Promise.resolve(byReply.shift() ?? null) };
  assert.equal(await chooseSession(sessions, replyReader, () => {}), "b");
});
