/**
 * A run with a network list: the model's curl reaches the allowed server through the proxy, a
 * host not in the list is refused, and both decisions are on the console
 * (`network: blocked HOST:PORT (reason)`) and in the trajectory (host and port only).
 */
import assert from "node:assert/strict";
import http from "node:http";
import { runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";

Deno.test("network run: decisions reach the console and the trajectory", async () => {
  const paths: string[] = [];
  const srv = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    res.end("reached\n");
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  const home = await trustedHomeWith(
    "deft-net-run-",
    () =>
      `network:\n  allow: ["127.0.0.1:${port}"]\n  deny: [{ host: "bad.test", reason: "no" }]\n`,
  );
  const workspace = `${home}/ws`;
  await Deno.mkdir(workspace);
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: `curl -sS http://127.0.0.1:${port}/ok/secret-path; ` +
        `curl -sS http://evil.test/x; curl -sS http://bad.test:8080/y`,
    }]]),
    chatToolCalls([["task_done", {}]], "done"),
    chatText("done"),
  ]);
  try {
    const trajectory = `${home}/t.json`;
    const run = await runMocked(mock, "fetch", workspace, {
      cwd: home,
      env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      extra: ["--sandbox", "workspace-write", "--approval", "never", "-t", trajectory],
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(paths, ["/ok/secret-path"]);
    assert.match(run.stderr, new RegExp(`network: allowed 127\\.0\\.0\\.1:${port}\\b`));
    assert.match(run.stderr, /network: blocked evil\.test:80 \(not in allow list\)/);
    assert.match(run.stderr, /network: blocked bad\.test:8080 \(denied by "bad\.test": no\)/);
    // The model read curl's answer with Deft's reason.
    const toolResult = JSON.stringify(mock.requests[1].body.messages);
    assert.match(toolResult, /reached/);
    assert.match(toolResult, /Blocked by Deft: evil\.test:80 not in allow list/);
    const recorded = JSON.parse(await Deno.readTextFile(trajectory)).network;
    assert.deepEqual(
      recorded.map((r: Record<string, unknown>) => [r.host, r.port, r.allowed, r.reason]),
      [
        ["127.0.0.1", port, true, "allowed"],
        ["evil.test", 80, false, "not in allow list"],
        ["bad.test", 8080, false, 'denied by "bad.test": no'],
      ],
    );
    assert.doesNotMatch(JSON.stringify(recorded), /secret-path/, "no path is recorded");
  } finally {
    await mock.close();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

Deno.test("network run: --json and stream-json carry each decision (host, port, outcome)", async () => {
  const srv = http.createServer((_req, res) => res.end("reached\n"));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  const home = await trustedHomeWith(
    "deft-net-json-",
    () => `network:\n  allow: ["127.0.0.1:${port}"]\n`,
  );
  const workspace = `${home}/ws`;
  await Deno.mkdir(workspace);
  const expected = [
    ["127.0.0.1", port, true, "allowed"],
    ["evil.test", 80, false, "not in allow list"],
  ];
  const pick = (r: Record<string, unknown>) => [r.host, r.port, r.allowed, r.reason];
  try {
    for (const format of ["json", "stream-json"]) {
      const mock = MockLLM.start([
        chatToolCalls([["bash", {
          command: `curl -sS http://127.0.0.1:${port}/ok/secret-path; curl -sS http://evil.test/x`,
        }]]),
        chatToolCalls([["task_done", {}]], "done"),
        chatText("done"),
      ]);
      try {
        const run = await runMocked(mock, "fetch", workspace, {
          cwd: home,
          env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
          extra: ["--sandbox", "workspace-write", "--approval", "never"].concat(
            "--output-format",
            format,
          ),
        });
        assert.equal(run.code, 0, run.stderr);
        const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
        const summary = lines.at(-1);
        assert.deepEqual(summary.network.map(pick), expected, "the summary carries them");
        assert.doesNotMatch(JSON.stringify(summary.network), /secret-path/, "never a path");
        if (format === "stream-json") {
          const events = lines.filter((e) => e.type === "network");
          assert.deepEqual(events.map(pick), expected);
          assert.doesNotMatch(JSON.stringify(events), /secret-path/, "never a path");
        } else assert.equal(lines.length, 1, "--json prints one summary");
      } finally {
        await mock.close();
      }
    }
  } finally {
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

Deno.test("network run: SOCKS5 decisions reach the console and the trajectory too", async () => {
  const paths: string[] = [];
  const srv = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    res.end("reached\n");
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  const home = await trustedHomeWith(
    "deft-net-socks-",
    () =>
      `network:\n  allow: ["127.0.0.1:${port}"]\n  deny: [{ host: "bad.test", reason: "no" }]\n`,
  );
  const workspace = `${home}/ws`;
  await Deno.mkdir(workspace);
  const socks = "--socks5-hostname 127.0.0.1:1080";
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: `curl -sS ${socks} http://127.0.0.1:${port}/ok/secret-path; ` +
        `curl -sS ${socks} http://evil.test/x; curl -sS ${socks} http://bad.test:8080/y`,
    }]]),
    chatToolCalls([["task_done", {}]], "done"),
    chatText("done"),
  ]);
  try {
    const trajectory = `${home}/t.json`;
    const run = await runMocked(mock, "fetch", workspace, {
      cwd: home,
      env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      extra: ["--sandbox", "workspace-write", "--approval", "never", "-t", trajectory],
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(paths, ["/ok/secret-path"]);
    assert.match(run.stderr, new RegExp(`network: allowed 127\\.0\\.0\\.1:${port}\\b`));
    assert.match(run.stderr, /network: blocked evil\.test:80 \(not in allow list\)/);
    assert.match(run.stderr, /network: blocked bad\.test:8080 \(denied by "bad\.test": no\)/);
    // The model read curl's SOCKS error: the protocol has no room for Deft's text.
    const toolResult = JSON.stringify(mock.requests[1].body.messages);
    assert.match(toolResult, /reached/);
    assert.match(toolResult, /Can't complete SOCKS5 connection to evil\.test\. \(2\)/);
    const recorded = JSON.parse(await Deno.readTextFile(trajectory)).network;
    assert.deepEqual(
      recorded.map((r: Record<string, unknown>) => [r.host, r.port, r.allowed, r.reason]),
      [
        ["127.0.0.1", port, true, "allowed"],
        ["evil.test", 80, false, "not in allow list"],
        ["bad.test", 8080, false, 'denied by "bad.test": no'],
      ],
    );
  } finally {
    await mock.close();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});
