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

Deno.test("fastParse: tool, tools and serve lines parse without node:util, as commander does", async () => {
  const lines = [
    ["tool", "task_done", "{}"],
    ["tool", "bash", '{"command": "ls -la"}', "-w", "/tmp/ws", "--sandbox", "none"],
    ["tool", "--sandbox=read-only", "view", "--deadline", "bash=5,default=9"],
    ["tool", "task_done", "--working-dir=", "{}"],
    ["tools", "--json", "--provider", "anthropic"],
    ["tools", "--json", "--json"],
    ["serve", "--parallel", "-w", "a dir", "--sandbox", "workspace-write"],
    ["serve", "--sandbox", "none", "--sandbox", "read-only"],
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
  assert.deepEqual(fastParse(["tool", "-w", "/x", "bash", "{}"])?.positionals, ["bash", "{}"]);
});

Deno.test("fastParse: a pipeline line in any other form goes to commander", () => {
  const lines = [
    ["tool"],
    ["tool", "a", "b", "c"],
    ["tool", "task_done", "--", "{}"],
    ["tool", "task_done", "-", "{}"],
    ["tool", "task_done", "-w"],
    ["tool", "task_done", "-w", "--sandbox", "none"],
    ["tool", "task_done", "-wdir"],
    ["tool", "task_done", "--sandbox", "bogus"],
    ["tool", "task_done", "--sandbox"],
    ["tools", "--json=yes"],
    ["tools", "--jsonx"],
    ["tools", "-j"],
    ["serve", "--parallel=1"],
    ["serve", "--__proto__", "x"],
    ["serve", "--constructor"],
  ];
  for (const args of lines) assert.equal(fastParse(args), undefined, args.join(" "));
});

Deno.test("fastParse: deft interactive and a launch line that surely opens a conversation parse without commander, as commander does; other launch lines go to commander", async () => {
  const lines = [
    ["interactive"],
    ["interactive", "fix it", "--approval", "never"],
    ["interactive", "-p", "openai_compatible", "-m", "m", "--model-base-url", "http://h/v1"],
    ["interactive", "-k", "k", "-w", "/tmp/ws", "--max-steps", "5", "--sandbox", "none"],
    ["interactive", "--image", "a.png", "--image", "b.png", "--no-project-instructions"],
    ["interactive", "-r"],
    ["interactive", "-r", "abc"],
    ["interactive", "--resume=abc"],
    ["interactive", "-r", "-c"],
    ["interactive", "--color", "never", "--max-cost-usd", "2", "--docker-keep"],
    ["-c"],
    ["-c", "fix"],
    ["fix the bug"],
    ["-C", "/tmp/ws", "fix the bug"],
    ["fix the bug", "-r"],
    ["-r", "ID"],
    ["--provider", "openai", "-m", "x", "a b", "--no-project-instructions"],
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
  assert.deepEqual(fastParse(["interactive", "-w", "/x", "say hi"])?.positionals, ["say hi"]);
  assert.deepEqual(fastParse(["-c", "go on"])?.positionals, ["go on"]);
  // Anything else is commander's: a mistyped command, a headless run, two workspaces, a form
  // the plain parser does not know.
  const others = [
    ["fix"],
    ["fix", "the", "bug"],
    ["-p", "fix the bug"],
    ["--print", "fix the bug"],
    ["-C", "/a", "-w", "/b", "fix the bug"],
    ["-c", "run"],
    ["-c", "help"],
    ["-c", "exec"],
    ["-c", "--bogus"],
    ["-V"],
    ["--", "fix the bug"],
    ["interactive", "a", "b"],
    ["interactive", "--image"],
    ["interactive", "--no-project-instructions=1"],
    ["interactive", "--color", "bogus"],
    ["interactive", "-r", "-"],
  ];
  for (const args of others) assert.equal(fastParse(args), undefined, args.join(" "));
});
