import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";

function parseOnly(stdout: string): Record<string, unknown> {
  const lines = stdout.trimEnd().split("\n");
  assert.equal(lines.length, 1, `stdout must hold exactly one JSON line, got: ${stdout}`);
  return JSON.parse(lines[0]);
}

Deno.test("deft tool prints one JSON result and exits 0 on success", async () => {
  const run = await runDeft(["tool", "task_done", "{}"]);
  assert.equal(run.code, 0);
  assert.deepEqual(parseOnly(run.stdout), {
    name: "task_done",
    success: true,
    output: "Task done.",
    error: null,
    error_code: 0,
  });
});

Deno.test("ARGS can come from stdin, and names ignore case and underscores", async () => {
  const args = JSON.stringify({
    thought: "plan",
    thought_number: 1,
    total_thoughts: 1,
    next_thought_needed: false,
  });
  const run = await runDeft(["tool", "SEQUENTIAL_THINKING"], { stdin: args });
  assert.equal(run.code, 0, run.stderr);
  const result = parseOnly(run.stdout);
  assert.equal(result.name, "sequentialthinking");
  assert.match(String(result.output), /thought_history_length/);
});

Deno.test("a failing tool or unknown tool exits 1 with the error in the JSON", async () => {
  const unknown = await runDeft(["tool", "No_Such_Tool", "{}"]);
  assert.equal(unknown.code, 1);
  const result = parseOnly(unknown.stdout);
  assert.equal(result.success, false);
  assert.match(String(result.error), /^Tool 'No_Such_Tool' not found\. Available tools: \[bash, /);

  const invalid = await runDeft(["tool", "task_done", '{"extra": 1}']);
  assert.equal(invalid.code, 1);
  assert.match(String(parseOnly(invalid.stdout).error), /unknown argument `extra`/);
});

Deno.test("usage errors exit 2 with a message on stderr and nothing on stdout", async () => {
  const cases: [string[], string | undefined, RegExp][] = [
    [["tool", "task_done", "{not json"], undefined, /ARGS is not valid JSON/],
    [["tool", "task_done", "[1, 2]"], undefined, /ARGS must be a JSON object, got an array/],
    [["tool", "task_done", "null"], undefined, /got null/],
    [["tool", "task_done"], "", /stdin was empty/],
    [["tool", "task_done"], "  \n", /stdin was empty/],
    [["tool", "task_done", "--bogus", "{}"], undefined, /unknown option '--bogus'/],
    [["tool"], undefined, /missing required argument 'name'/],
    [["tool", "task_done", "{}", "extra"], undefined, /too many arguments/],
    [["tool", "task_done", "-w", "/no/such/dir", "{}"], undefined, /does not exist/],
    [["tool", "task_done", "--sandbox", "loose", "{}"], undefined, /Allowed choices/],
    [["frobnicate"], undefined, /unknown command 'frobnicate'/],
    [[], undefined, /Usage: deft/],
  ];
  for (const [args, stdin, expected] of cases) {
    const run = await runDeft(args, { stdin });
    assert.equal(run.code, 2, `deft ${args.join(" ")}: ${run.stderr}`);
    assert.equal(run.stdout, "", `deft ${args.join(" ")} wrote to stdout`);
    assert.match(run.stderr, expected);
    assert.doesNotMatch(run.stderr, /\n\s+at /, "no stack traces");
  }
});

Deno.test("a 10 MB argument on stdin goes through", async () => {
  const thought = "x".repeat(10 * 1024 * 1024);
  const args = JSON.stringify({
    thought,
    thought_number: 1,
    total_thoughts: 1,
    next_thought_needed: false,
  });
  const run = await runDeft(["tool", "sequentialthinking"], { stdin: args });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(parseOnly(run.stdout).success, true);
});

Deno.test("--help works on every command", async () => {
  for (const args of [["--help"], ["tool", "--help"], ["tools", "--help"], ["serve", "--help"]]) {
    const run = await runDeft(args);
    assert.equal(run.code, 0, args.join(" "));
    assert.match(run.stdout, /Usage: deft/);
  }
});
