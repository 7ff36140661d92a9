/**
 * `deft serve` under a network list: each answer line carries the destinations decided during
 * its own call (`network`: host, port, allowed, reason; never a path), calls running at the same
 * time (`--parallel`) get only their own, and stderr shows each decision.
 */
import assert from "node:assert/strict";
import { runDeft, trustedHomeWith } from "../../helpers/deft.ts";
import { loopbackServer } from "../../helpers/loopback.ts";

const pick = (r: Record<string, unknown>) => [r.host, r.port, r.allowed, r.reason];

Deno.test("serve --parallel: each call's line carries its own network decisions", async () => {
  const shellSide = await loopbackServer("shell");
  // The page web_fetch reads answers late, so the fetch runs while both shell calls do.
  const fetchSide = await loopbackServer("page", async (_req, res) => {
    await new Promise((r) => setTimeout(r, 1500));
    res.setHeader("content-type", "text/plain");
    res.end("page body\n");
    return true;
  });
  const home = await trustedHomeWith(
    "deft-serve-net-",
    () =>
      `network:\n  allow: ["127.0.0.1:${shellSide.port}", "127.0.0.1:${fetchSide.port}"]\n` +
      `  deny: [{ host: "bad.test", reason: "no" }]\n`,
  );
  const workspace = `${home}/ws`;
  await Deno.mkdir(workspace);
  const batch = [
    {
      id: "a",
      name: "bash",
      arguments: {
        command: `curl -sS http://127.0.0.1:${shellSide.port}/a/secret-path; sleep 1; ` +
          `curl -sS http://evil.test/x; true`,
      },
    },
    { id: "b", name: "web_fetch", arguments: { url: `http://127.0.0.1:${fetchSide.port}/page` } },
    { id: "c", name: "bash", arguments: { command: "curl -sS http://bad.test:8080/y; true" } },
    { id: "d", name: "bash", arguments: { command: "echo no network here" } },
  ];
  try {
    const run = await runDeft(
      ["serve", "-w", workspace, "--sandbox", "workspace-write", "--parallel", "--approve-asks"],
      {
        stdin: JSON.stringify(batch) + "\n",
        cwd: home,
        env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      },
    );
    assert.equal(run.code, 0, run.stderr);
    const out = run.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(out.map((o) => o.id), ["a", "b", "c", "d"]);
    assert.deepEqual(out.map((o) => o.success), [true, true, true, true], run.stdout);
    assert.match(out[1].output, /page body/);
    assert.deepEqual(out[0].network.map(pick), [
      ["127.0.0.1", shellSide.port, true, "allowed"],
      ["evil.test", 80, false, "not in allow list"],
    ]);
    assert.deepEqual(out[1].network.map(pick), [["127.0.0.1", fetchSide.port, true, "allowed"]]);
    assert.deepEqual(out[2].network.map(pick), [[
      "bad.test",
      8080,
      false,
      'denied by "bad.test": no',
    ]]);
    assert.equal(out[3].network, undefined, "a call that used no network carries no list");
    assert.match(out[0].output, /shell \/a\/secret-path/, "the allowed server was reached");
    assert.doesNotMatch(JSON.stringify(out.map((o) => o.network)), /secret-path/, "never a path");
    assert.match(run.stderr, /deft serve: network: blocked evil\.test:80 \(not in allow list\)/);
    assert.match(
      run.stderr,
      /deft serve: network: blocked bad\.test:8080 \(denied by "bad\.test": no\)/,
    );
    assert.match(
      run.stderr,
      new RegExp(`deft serve: network: allowed 127\\.0\\.0\\.1:${fetchSide.port}`),
    );
  } finally {
    await shellSide.close();
    await fetchSide.close();
  }
});
