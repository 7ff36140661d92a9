/**
 * `deft interactive` draws its prompt before its session is assembled (issue 51: launch to
 * prompt ≤ 2× `deft tool task_done`). What must hold: every configuration mistake still stops
 * the start before any prompt; a line typed the moment the prompt appears, while the session is
 * still being assembled behind it, waits ("starting…") and gets its answer; /help answers at
 * once; Ctrl-D during the assembly ends the session cleanly, leaving no process behind.
 *
 * A slow MCP server holds the assembly up: it sleeps before it speaks MCP, long enough that a
 * prompt drawn only after the session was assembled would come after it.
 */
import assert from "node:assert/strict";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain, runDeftInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { sessionHome } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

/** A stdio MCP server that sleeps `seconds` before it answers, then offers no tools. */
const SLOW_SERVER = `
import json, sys, time
time.sleep(float(sys.argv[1]))
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "slow", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": []}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
`;

/**
 * A fresh home whose user config starts the slow server (`marker` in its command line, to find
 * it among the processes), and the environment that makes it Deft's.
 */
async function slowHome(marker: string, seconds: number): Promise<Record<string, string>> {
  const { home, env } = await sessionHome();
  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(`${home}/slow_server.py`, SLOW_SERVER);
  await Deno.writeTextFile(
    `${home}/.config/deft/config.yaml`,
    [
      "mcp_servers:",
      `  slow: { command: python3, args: [${home}/slow_server.py, "${seconds}", ${marker}] }`,
      "allow_mcp_servers: [slow]",
      "",
    ].join("\n"),
  );
  return env;
}

/**
 * The processes whose command line holds `marker` (pgrep leaves itself out) that are still there
 * after a few seconds: a sandboxed server's last process is killed by the kernel as its sandbox
 * ends, which a loaded machine may show a moment after Deft has exited; one left behind stays.
 */
async function processesWith(marker: string): Promise<string[]> {
  let left: string[] = [];
  for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
    const out = await new Deno.Command("pgrep", { args: ["-f", marker], stdout: "piped" }).output();
    left = new TextDecoder().decode(out.stdout).split("\n").filter((line) => line !== "");
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
  return left;
}

Deno.test("interactive assembly (pty): a line typed as the prompt appears waits for the session (starting…) and gets its answer; /help answers at once", async () => {
  const repo = await makeBuggyRepo();
  const marker = `deft-slow-mcp-${crypto.randomUUID()}`;
  const env = await slowHome(marker, 4);
  const mock = MockLLM.start([chatText("The answer is 42.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "/help" + ENTER, delay: 0 },
      { expect: "Commands:[\\s\\S]*deft> ", send: "what is the answer" + ENTER, delay: 0 },
      { expect: "The answer is 42\\.[\\s\\S]*deft> ", send: "/exit" + ENTER },
    ], { args: ["--approval", "never"], env, timeoutSeconds: 90 });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // The line sent after /help's answer still waited for the session ("starting…"): the
    // prompt and /help were answered while it was being assembled. Then the line got its answer.
    const help = out.indexOf("Commands:");
    const sent = out.indexOf("what is the answer");
    const waited = out.indexOf("starting…");
    assert.ok(0 < help && help < sent && sent < waited, `/help waited for the session:\n${out}`);
    assert.match(out.slice(waited), /The answer is 42\./);
    assert.equal(mock.requests.length, 1);
  } finally {
    await mock.close();
  }
  assert.deepEqual(await processesWith(marker), []);
});

Deno.test("interactive assembly (pty): Ctrl-D while the session is assembled ends it cleanly, no process left", async () => {
  const repo = await makeBuggyRepo();
  const marker = `deft-slow-mcp-${crypto.randomUUID()}`;
  const env = await slowHome(marker, 3);
  const mock = MockLLM.start([]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: CTRL_D, delay: 0 },
    ], { args: ["--approval", "never"], env, timeoutSeconds: 90 });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(out, /bye\s*$/);
    assert.doesNotMatch(out, /error|starting…/i);
    // Left during the assembly: the prompt came before the session started its server.
    assert.ok(out.indexOf("deft> ") < out.indexOf("starting MCP servers: slow"), out);
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
  assert.deepEqual(await processesWith(marker), [], "the MCP server outlived the session");
});

Deno.test("interactive assembly (pty): a bad deft.yaml, an unknown tool in agents.*.tools, a bad --approval-rules file stop the start before any prompt", async () => {
  const mock = MockLLM.start([]);
  try {
    const badYaml = await makeBuggyRepo();
    await Deno.writeTextFile(`${badYaml}/deft.yaml`, "approval: [never\n");
    const { env } = await sessionHome();
    const yaml = await interactiveInPty(badYaml, mock, [], { env, timeoutSeconds: 60 });
    assert.notEqual(yaml.code, 0, yaml.out);
    assert.match(yaml.out, /deft\.yaml/);
    assert.doesNotMatch(yaml.out, /deft> /, "a prompt was drawn before the config error");

    const repo = await makeBuggyRepo();
    const { home, env: toolEnv } = await sessionHome();
    await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
    await Deno.writeTextFile(
      `${home}/.config/deft/config.yaml`,
      "model_providers:\n  mp: { provider: openai_compatible }\n" +
        "models:\n  m: { model_provider: mp, model: mock }\n" +
        "agents:\n  deft_agent: { model: m, tools: [bash, no_such_tool] }\n",
    );
    const tool = await interactiveInPty(repo, mock, [], { env: toolEnv, timeoutSeconds: 60 });
    assert.equal(tool.code, 2, tool.out);
    assert.match(
      tool.out,
      /agents\.\*\.tools: Unknown tool 'no_such_tool'\. Valid tool names: bash,/,
    );
    assert.doesNotMatch(tool.out, /deft> /, "a prompt was drawn before the config error");

    // What the session would refuse of the flags and the files beside the config is said there too.
    const rules = `${repo}/rules.yaml`;
    await Deno.writeTextFile(rules, "allow: 5\n");
    const { env: plainEnv } = await sessionHome();
    const refused = await interactiveInPty(repo, mock, [], {
      args: ["--approval-rules", rules],
      env: plainEnv,
      timeoutSeconds: 60,
    });
    assert.equal(refused.code, 2, refused.out);
    assert.match(refused.out, /rules\.yaml \(--approval-rules\) is not an approval rules file/);
    assert.doesNotMatch(refused.out, /deft> /, "a prompt was drawn before the rules error");
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive assembly (pty): a provider without its base URL, a cost cap on a model without a price stop the start before any prompt", async () => {
  const repo = await makeBuggyRepo();
  const { env } = await sessionHome();
  const r = await runDeftInPty(
    ["interactive", "-w", repo, "--provider", "openai_compatible", "-m", "mock", "-k", "k"],
    [],
    { cwd: repo, env, timeoutSeconds: 60 },
  );
  const out = plain(r.output);
  assert.equal(r.code, 2, out);
  assert.match(out, /Provider 'openai_compatible' needs the server's base URL/);
  assert.doesNotMatch(out, /deft> /, "a prompt was drawn before the error");

  const mock = MockLLM.start([]);
  try {
    const capped = await interactiveInPty(repo, mock, [], {
      args: ["--max-cost-usd", "5"],
      model: "a-model-without-a-price",
      env,
      timeoutSeconds: 60,
    });
    assert.equal(capped.code, 2, capped.out);
    assert.match(capped.out, /a cost cap \(--max-cost-usd or budget\.max_cost_usd\) is set/);
    assert.doesNotMatch(capped.out, /deft> /, "a prompt was drawn before the budget error");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive assembly (pty): an error of the assembly behind the prompt ends the session plainly, with the code it always had", async () => {
  const repo = await makeBuggyRepo();
  const { home, env } = await sessionHome();
  // A PATH with git but no bubblewrap: the sandbox asked for cannot be made, which the session
  // finds only when it builds its tools, behind the prompt.
  const bin = `${home}/bin`;
  await Deno.mkdir(bin);
  const dirs = (Deno.env.get("PATH") ?? "").split(":");
  for (const program of ["git", "sh"]) {
    for (const dir of dirs) {
      if (await Deno.stat(`${dir}/${program}`).then((s) => s.isFile, () => false)) {
        await Deno.symlink(`${dir}/${program}`, `${bin}/${program}`);
        break;
      }
    }
  }
  const mock = MockLLM.start([]);
  try {
    const r = await interactiveInPty(repo, mock, [], {
      args: ["--approval", "never", "--sandbox", "workspace-write"],
      env: { ...env, PATH: bin },
      timeoutSeconds: 60,
    });
    assert.equal(r.failed, null, r.out);
    assert.equal(r.code, 2, r.out);
    const prompt = r.out.indexOf("deft> ");
    assert.ok(prompt >= 0, `no prompt was drawn:\n${r.out}`);
    // On a line of its own after the prompt, as it was said before there was a prompt.
    assert.match(r.out.slice(prompt), /\ndeft: The sandbox needs bubblewrap, but `bwrap`/);
    assert.doesNotMatch(r.out, /bye/);
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});
