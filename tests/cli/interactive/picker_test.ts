/** The session picker: only a number on the list (or a line of it) resumes; anything else asks again. */
import assert from "node:assert/strict";
import { chooseSession } from "../../../src/cli/interactive/picker.ts";
import type { SessionSummary } from "../../../src/trajectory/conversation.ts";

function session(id: string, task: string): SessionSummary {
  return {
    id,
    path: `/state/${id}.json`,
    started: "2026-12-04T10:00:00Z",
    task,
    steps: 1,
    outcome: "completed",
  };
}

const SESSIONS = [session("newest", "the second task"), session("oldest", "the first task")];

/** Answers `answers` in turn (null once they run out); records each question and what was said. */
function picker(answers: (string | null)[]) {
  const asked: string[] = [];
  const said: string[] = [];
  const reader = {
    choose: (question: string) => {
      asked.push(question);
      return Promise.resolve(answers.length > 0 ? answers.shift()! : null);
    },
  };
  return { asked, said, pick: () => chooseSession(SESSIONS, reader, (t) => said.push(t)) };
}

Deno.test("picker: 0 and other numbers off the list are refused and asked again", async () => {
  for (const wrong of ["0", "00", "3", "-1", "99999999999999999999", "1.5", "one"]) {
    const p = picker([wrong, "2"]);
    assert.equal(await p.pick(), "oldest", `after ${JSON.stringify(wrong)} the next answer picks`);
    assert.equal(p.asked.length, 2, `${JSON.stringify(wrong)} was not asked again`);
    assert.ok(
      p.said.includes(`'${wrong}' is not one of 1-2.`),
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
