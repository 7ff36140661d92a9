import assert from "node:assert/strict";
import { deftFlags } from "../../../../scripts/deft_flags.ts";
import { denoDir, mockRunArgs, REPO_ROOT, runDeft } from "../../../helpers/deft.ts";
import { chatStream, chatToolCalls, MockLLM, type MockReply } from "../../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../../helpers/repo.ts";
import { tempDir } from "../../../helpers/temp.ts";

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
// deno-lint-ignore no-control-regex
const COLOUR = /\x1b\[3\dm/;
const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

function script(repo: string, stream: boolean, delayMs: number): MockReply[] {
  const as = stream ? (r: MockReply) => chatStream(r, 120) : (r: MockReply) => r;
  const first = as(chatToolCalls(
    [["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]],
    "The function subtracts where it should add, so I will fix the sign now.",
  ));
  return [
    { ...first, delayMs },
    as(chatToolCalls([["bash", { command: `cd ${repo} && python3 check.py` }]])),
    as(chatToolCalls([["task_done", {}]], "Fixed.")),
  ];
}

function args(mock: MockLLM, repo: string, home: string, extra: string[] = []): string[] {
  return mockRunArgs(mock, "fix add", repo, {
    extra: ["--patch-path", `${home}/fix.patch`, "-t", `${home}/t.json`, ...extra],
  });
}

/** Runs deft on a pseudo-terminal (util-linux `script`); returns the output with arrival times. */
async function onTerminal(argv: string[], env: Record<string, string>) {
  const command = [Deno.execPath(), "run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...argv]
    .map(shellQuote).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qfec", command, "/dev/null"],
    // NO_COLOR may be set around the test run (CI sets it); empty means unset (no-color.org).
    env: { DENO_DIR: denoDir(), TERM: "xterm-256color", NO_COLOR: "", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const started = performance.now();
  const chunks: { at: number; text: string }[] = [];
  const decoder = new TextDecoder();
  for await (const bytes of child.stdout) {
    chunks.push({ at: performance.now() - started, text: decoder.decode(bytes, { stream: true }) });
  }
  const status = await child.status;
  await child.stderr.cancel();
  const output = chunks.map((c) => c.text).join("").replaceAll("\r\n", "\n");
  /** When `needle` first appeared in the output (ms), or -1. */
  const seen = (needle: string | RegExp) => {
    let text = "";
    for (const c of chunks) {
      text += c.text;
      const plain = text.replace(ANSI, "");
      if (typeof needle === "string" ? plain.includes(needle) : needle.test(plain)) return c.at;
    }
    return -1;
  };
  const plain = output.replace(ANSI, "");
  // What stays on screen: spinner frames are drawn over and erased.
  const screen = plain.replace(/\r[\u2800-\u28ff][^\r\n]*/g, "").replaceAll("\r", "");
  return { code: status.code, output, plain, screen, seen };
}

Deno.test("on a terminal: spinner, streamed text, tool calls, coloured diff, summary", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const mock = MockLLM.start(script(repo, true, 1500));
  try {
    const r = await onTerminal(args(mock, repo, home), { HOME: home });
    assert.equal(r.code, 0, r.plain);
    // The spinner, with its elapsed time, while the model delays its first answer.
    assert.match(r.plain, /⠋ step 1 · waiting for the model · 0\.0 s/);
    assert.match(r.plain, /waiting for the model · 1\.\d s/);
    // The text streamed in: its first words were on screen well before the last ones.
    const first = r.seen("The function");
    const last = r.seen("fix the sign now.");
    assert.ok(first > 0 && last - first > 500, `first ${first} ms, last ${last} ms`);
    // The tool call with its main argument, then ok in green and the diff in colour.
    assert.match(r.screen, /● str_replace_based_edit_tool str_replace \S+calc\.py/);
    assert.ok(r.output.includes("\x1b[32m✓ ok"), "ok in green");
    assert.match(
      r.screen,
      /calc\.py\n\s+@@ .* @@.*\n\s+ def add\(a, b\):\n\s+- {4}return a - b\n\s+\+ {4}return a \+ b/,
    );
    assert.ok(COLOUR.test(r.output));
    // The bash call's output, then the closing report.
    assert.match(r.screen, /● bash cd \S+ && python3 check.py\n\s+✓ ok\n\s+│ check passed/);
    assert.match(r.screen, /✓ completed in 3 step\(s\)/);
    assert.match(r.screen, /files changed \(1\):\n\s+calc\.py\s+\+1 −1/);
    assert.match(r.screen, new RegExp(`patch written to ${home}/fix\\.patch`));
    assert.match(r.screen, /tokens: 300 in, 30 cached, 60 out/);
  } finally {
    await mock.close();
  }
});

Deno.test("on a terminal with NO_COLOR: live, but no colours", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const mock = MockLLM.start(script(repo, true, 0));
  try {
    const r = await onTerminal(args(mock, repo, home), { HOME: home, NO_COLOR: "1" });
    assert.equal(r.code, 0, r.plain);
    assert.doesNotMatch(r.output, COLOUR);
    assert.match(r.screen, /- {4}return a - b\n\s+\+ {4}return a \+ b/);
    // --color always wins over NO_COLOR.
    const again = MockLLM.start(script(repo, true, 0));
    await new Deno.Command("git", { args: ["checkout", "."], cwd: repo }).output();
    try {
      const coloured = await onTerminal(args(again, repo, home, ["--color", "always"]), {
        HOME: home,
        NO_COLOR: "1",
      });
      assert.equal(coloured.code, 0, coloured.plain);
      assert.match(coloured.output, COLOUR);
    } finally {
      await again.close();
    }
  } finally {
    await mock.close();
  }
});

Deno.test("off a terminal: plain lines as before, no escape codes, the patch is named", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const mock = MockLLM.start(script(repo, false, 0));
  try {
    const r = await runDeft(args(mock, repo, home), { cwd: home, env: { HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stderr.includes("\x1b"), "no escape codes");
    assert.match(r.stderr, /^\[1\] str_replace_based_edit_tool .* → ok$/m);
    assert.match(
      r.stderr,
      new RegExp(`patch written to ${home}/fix\\.patch \\(1 file\\(s\\) changed\\)`),
    );
    assert.equal(mock.requests[0].body.stream, undefined, "no streaming off a terminal");
  } finally {
    await mock.close();
  }
});
