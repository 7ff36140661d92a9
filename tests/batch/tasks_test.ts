import assert from "node:assert/strict";
import { parseTasks } from "../../src/batch/tasks.ts";
import { indexRanges, shellQuote } from "../../src/batch/slurm.ts";
import { UsageError } from "../../src/errors.ts";

Deno.test("a valid task file: relative repos and replays resolve against its folder", () => {
  const tasks = parseTasks(
    [
      '{"id": "a", "repo": "repos/a", "task": "fix it", "test": "make test", "max_steps": 5}',
      "",
      '{"id": "b.2", "repo": "https://example.com/r.git", "commit": "v1.2", "replay": "t.json", "timeout": 1.5}',
    ].join("\n"),
    "/data/tasks.jsonl",
  );
  assert.equal(tasks.length, 2);
  assert.deepEqual(tasks[0], {
    index: 0,
    id: "a",
    repo: "/data/repos/a",
    task: "fix it",
    test: "make test",
    max_steps: 5,
  });
  assert.equal(tasks[1].index, 1);
  assert.equal(tasks[1].repo, "https://example.com/r.git");
  assert.equal(tasks[1].replay, "/data/t.json");
  assert.equal(tasks[1].timeout, 1.5);
});

Deno.test("every bad line is reported with its line number, and nothing is returned", () => {
  const text = [
    '{"id": "ok", "repo": "r", "task": "t"}',
    "not json",
    '{"id": "../escape", "repo": "r", "task": "t"}',
    '{"id": "ok", "repo": "r", "task": "t"}',
    '{"id": "c", "repo": "r", "task": "t", "commit": "--upload-pack=evil"}',
    '{"id": "d", "task": "t", "max_steps": 0, "tset": "x"}',
    '{"id": "e", "repo": "r"}',
    "[1, 2]",
  ].join("\n");
  let message = "";
  try {
    parseTasks(text, "T.jsonl");
  } catch (e) {
    assert.ok(e instanceof UsageError);
    message = e.message;
  }
  assert.match(message, /7 bad line\(s\); nothing was started/);
  assert.match(message, /T\.jsonl:2: not valid JSON/);
  assert.match(message, /T\.jsonl:3: "id" "\.\.\/escape" must be/);
  assert.match(message, /T\.jsonl:4: "id" "ok" is used again \(first on line 1\)/);
  assert.match(message, /T\.jsonl:5: "commit" "--upload-pack=evil" is not a commit/);
  assert.match(
    message,
    /T\.jsonl:6: unknown field\(s\) tset.*"repo" is missing.*"max_steps" must be/,
  );
  assert.match(message, /T\.jsonl:7: "task" is missing/);
  assert.match(message, /T\.jsonl:8: expected a JSON object/);
  assert.doesNotMatch(message, /T\.jsonl:1:/);
});

Deno.test("an empty task file is refused", () => {
  assert.throws(() => parseTasks("\n\n", "E.jsonl"), /holds no tasks/);
});

Deno.test("array ranges and shell quoting for the job script", () => {
  assert.equal(indexRanges([7, 0, 1, 2, 5, 8]), "0-2,5,7-8");
  assert.equal(indexRanges([3]), "3");
  assert.equal(shellQuote("/a/b.jsonl"), "/a/b.jsonl");
  assert.equal(shellQuote("it's $HOME"), "'it'\\''s $HOME'");
});
