import assert from "node:assert/strict";
import { fastParse } from "../../src/cli/fast.ts";
import { commanderParse } from "../../src/cli/program.ts";

Deno.test("fastParse: --version and --help are not pipeline commands", () => {
  for (const args of [["--version"], ["-V"], ["--help"], ["-h"]]) {
    assert.equal(fastParse(args), undefined, args.join(" "));
  }
});

Deno.test("fastParse: deft sessions and deft config parse without commander, as commander does", async () => {
  const lines = [
    ["sessions"],
    ["sessions", "--json"],
    ["sessions", "-n", "5", "-w", "/tmp/x"],
    ["sessions", "--limit=007", "--working-dir", "a dir"],
    ["sessions", "-n", "3", "-n", "4"],
    ["config"],
    ["config", "-p", "anthropic", "-m", "claude-x", "--config-file", "c.yaml"],
    ["config", "--model-base-url", "http://h", "-k", "sk-x", "--provider", "openai"],
  ];
  for (const args of lines) {
    const fast = fastParse(args);
    assert.ok(fast, `the fast path takes: ${args.join(" ")}`);
    const commander = await commanderParse(args);
    assert.deepEqual(
      { command: fast.command, options: fast.options },
      { command: commander.command, options: commander.options },
      args.join(" "),
    );
  }
});

Deno.test("fastParse: a sessions or config line it is not sure of goes to commander", () => {
  const lines = [
    ["sessions", "-n", "0"],
    ["sessions", "-n", "x"],
    ["sessions", "-n", "0x5"],
    ["sessions", "-n", "1.5"],
    ["sessions", "-n", "-1"],
    ["sessions", "-n"],
    ["sessions", "extra"],
    ["sessions", "--help"],
    ["sessions", "--bogus"],
    ["config", "-m"],
    ["config", "--help"],
    ["config", "word"],
    ["config", "--json"],
  ];
  for (const args of lines) assert.equal(fastParse(args), undefined, args.join(" "));
});
