/**
 * Hooks under the network list (issue 53, "one list everywhere"): `deft run` against the mock
 * model with real bubblewrap and a `network:` list in the user's config. A PreToolUse and a
 * PostToolUse hook (they run in the session's sandbox) reach the allowed server through Deft's
 * proxy, with curl and with Python's urllib, and get the proxy's 403 for a server the list does
 * not name, which is never reached; a hook that ignores the proxy variables has no route even
 * to the allowed one. The hooks' destinations are on the console and in the trajectory, as the
 * shell's are. A container session's hooks (its tools start no proxy on the host) get the
 * list's proxy too. The servers are the test's own, on 127.0.0.1.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { runMocked, trustedHome } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { sessionHooks } from "../../../src/agent/hook_gate.ts";
import { closeNetworkProxies } from "../../../src/policy/network/mod.ts";
import { parseEntry } from "../../../src/policy/network/rules.ts";

/** A server on 127.0.0.1 that answers `NAME PATH` and keeps the paths it was asked for. */
async function site(name: string) {
  const paths: string[] = [];
  const srv = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    res.end(`${name} ${req.url}`);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  return {
    port,
    paths,
    close: () => new Promise<void>((r) => srv.close(() => r())),
  };
}

/** `curl` of URL, printing `CODE BODY` (CODE 000 when no connection was made) into FILE. */
function curlInto(file: string, url: string, flags = ""): string {
  return `curl -sS --max-time 10 ${flags} -o body.tmp -w '%{http_code}' ${url} > ${file} ` +
    `2>/dev/null; printf ' %s' "$(cat body.tmp 2>/dev/null)" >> ${file}; rm -f body.tmp`;
}

/** Python's urllib GET of URL (the proxy variables honoured), printing `CODE BODY` into FILE. */
function urllibInto(file: string, url: string): string {
  const program = [
    "import sys, urllib.request, urllib.error",
    "try:",
    "    r = urllib.request.urlopen(sys.argv[1], timeout=10); code, body = r.status, r.read()",
    "except urllib.error.HTTPError as e:",
    "    code, body = e.code, e.read()",
    "except Exception as e:",
    "    code, body = 0, str(e).encode()",
    'open(sys.argv[2], "w").write(str(code) + " " + body.decode(errors="replace"))',
  ].join("\n");
  return `python3 -c '${program}' ${url} ${file}`;
}

Deno.test("network list: sandboxed PreToolUse/PostToolUse hooks reach the allowed host through the proxy, are refused the others, and have no route around it", async () => {
  const good = await site("good");
  const evil = await site("evil");
  const home = await trustedHome("deft-hooks-net-");
  const workspace = `${home}/ws`;
  await Deno.mkdir(workspace);
  const goodUrl = (path: string) => `http://127.0.0.1:${good.port}${path}`;
  const evilUrl = (path: string) => `http://127.0.0.1:${evil.port}${path}`;
  // Each hook reads its input, then leaves what it got in the workspace (writable in the
  // sandbox), where the test reads it.
  const pre = [
    "cat >/dev/null",
    curlInto("pre-good.txt", goodUrl("/pre")),
    curlInto("pre-evil.txt", evilUrl("/pre")),
    // The proxy variables ignored: a direct connection, even to the allowed server.
    curlInto("pre-direct.txt", goodUrl("/direct-pre"), "--noproxy '*'"),
  ].join("; ");
  const post = [
    "cat >/dev/null",
    urllibInto("post-good.txt", goodUrl("/post")),
    urllibInto("post-evil.txt", evilUrl("/post")),
    `env -u http_proxy -u HTTP_PROXY -u all_proxy -u ALL_PROXY ` +
    urllibInto("post-direct.txt", goodUrl("/direct-post")),
  ].join("; ");
  const config = `${home}/.config/deft/config.yaml`;
  await Deno.writeTextFile(
    config,
    (await Deno.readTextFile(config)) +
      // Loopback addresses need an entry of their own: the list names the allowed server's.
      `network:\n  allow: ["127.0.0.1:${good.port}"]\n` +
      `hooks:\n` +
      `  PreToolUse:\n    - matcher: bash\n      hooks:\n` +
      `        - { type: command, command: ${JSON.stringify(pre)} }\n` +
      `  PostToolUse:\n    - matcher: bash\n      hooks:\n` +
      `        - { type: command, command: ${JSON.stringify(post)} }\n`,
  );
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "echo hi" }]]),
    chatToolCalls([["task_done", {}]], "done"),
    chatText("done"),
  ]);
  try {
    const trajectory = `${home}/t.json`;
    const run = await runMocked(mock, "go", workspace, {
      cwd: home,
      env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      extra: ["--sandbox", "workspace-write", "--approval", "never", "-t", trajectory],
    });
    assert.equal(run.code, 0, run.stderr);
    const said = async (name: string) =>
      (await Deno.readTextFile(`${workspace}/${name}`).catch(() => "(not written)")).trim();
    // The allowed server, through the proxy, with curl and with urllib.
    assert.equal(await said("pre-good.txt"), "200 good /pre", run.stderr);
    assert.equal(await said("post-good.txt"), "200 good /post", run.stderr);
    // The unlisted one (another port of the same address): Deft's proxy answers 403, saying why.
    const blocked = new RegExp(
      `^403 Blocked by Deft: 127\\.0\\.0\\.1:${evil.port} port ${evil.port} not allowed`,
    );
    assert.match(await said("pre-evil.txt"), blocked);
    assert.match(await said("post-evil.txt"), blocked);
    assert.deepEqual(evil.paths, [], "the unlisted server was never reached");
    // Past the proxy there is no route: not even the allowed server answers.
    assert.match(await said("pre-direct.txt"), /^000\b/);
    assert.match(await said("post-direct.txt"), /^0 /);
    assert.deepEqual(good.paths, ["/pre", "/post"], "only the proxied requests arrived");
    // Recorded as the shell's are: the console line and the trajectory (host and port only).
    assert.match(run.stderr, new RegExp(`network: allowed 127\\.0\\.0\\.1:${good.port}\\b`));
    assert.match(
      run.stderr,
      new RegExp(`network: blocked 127\\.0\\.0\\.1:${evil.port} \\(port ${evil.port} not allowed`),
    );
    const recorded = JSON.parse(await Deno.readTextFile(trajectory)).network as {
      port: number;
      allowed: boolean;
    }[];
    assert.deepEqual(
      recorded.map((r) => [r.port, r.allowed]),
      [[good.port, true], [evil.port, false], [good.port, true], [evil.port, false]],
    );
    assert.doesNotMatch(JSON.stringify(recorded), /\/pre|\/post/, "no path is recorded");
  } finally {
    await mock.close();
    await good.close();
    await evil.close();
  }
});

Deno.test("network list: a container session's sandboxed hooks get the list's proxy, though its tools started none on the host", async () => {
  const good = await site("good");
  const evil = await site("evil");
  await using dir = await tempDir("deft-hooks-net-ctr-");
  const list = { allow: [parseEntry(`127.0.0.1:${good.port}`)], deny: [] };
  const command = [
    "cat >/dev/null",
    curlInto("good.txt", `http://127.0.0.1:${good.port}/ctr`),
    curlInto("evil.txt", `http://127.0.0.1:${evil.port}/ctr`),
  ].join("; ");
  const reports: string[] = [];
  try {
    // A container session's settings, as its workplace settles them: no sandbox of the host's
    // for the tools (the container is theirs), so no proxy was started for them.
    const hooks = await sessionHooks(
      { PreToolUse: [{ matcher: "bash", hooks: [{ type: "command", command }] }] },
      undefined,
      dir.path,
      (t) => reports.push(t),
      { id: "0123456789ab", runtime: "docker", workspace: "/testbed" },
      undefined,
      { sandbox: "none", network: list },
    );
    assert.ok(hooks);
    assert.notEqual(hooks.policy.sandbox, "none", "the hooks run in the host's sandbox");
    await hooks.preToolUse("bash", { command: "true" });
    assert.deepEqual(reports, []);
    const said = async (name: string) =>
      (await Deno.readTextFile(`${dir.path}/${name}`).catch(() => "(not written)")).trim();
    assert.equal(await said("good.txt"), "200 good /ctr");
    assert.match(await said("evil.txt"), /^403 Blocked by Deft: /);
    assert.deepEqual(evil.paths, [], "the unlisted server was never reached");
  } finally {
    await closeNetworkProxies();
    await good.close();
    await evil.close();
  }
});
