/**
 * `deft mcp` under a network list: a tool result carries the destinations decided during its
 * own call in `_meta["deft/network"]` (host, port, allowed, reason; never a path), the content
 * stays the tool's text, and stderr shows each decision.
 */
import assert from "node:assert/strict";
import { runDeft, trustedHomeWith } from "../../helpers/deft.ts";
import { loopbackServer } from "../../helpers/loopback.ts";

const pick = (r: Record<string, unknown>) => [r.host, r.port, r.allowed, r.reason];

Deno.test("deft mcp: each tools/call result carries its own network decisions in _meta", async () => {
  const server = await loopbackServer("mcp-side");
  const home = await trustedHomeWith(
    "deft-mcp-net-",
    () => `network:\n  allow: ["127.0.0.1:${server.port}"]\n`,
  );
  const workspace = `${home}/ws`;
  await Deno.mkdir(workspace);
  const call = (id: number, command: string) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "bash", arguments: { command } },
  });
  const input = [
    {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "net-test", version: "1" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    // Sent together: the second waits for the shell while the first runs.
    call(
      1,
      `curl -sS http://127.0.0.1:${server.port}/secret-path; sleep 1; curl -sS http://evil.test/; true`,
    ),
    call(2, "echo quiet"),
    call(3, "curl -sS http://other.test:8443/; true"),
  ].map((m) => JSON.stringify(m)).join("\n") + "\n";
  try {
    const run = await runDeft(["mcp", "-w", workspace, "--sandbox", "workspace-write"], {
      stdin: input,
      cwd: home,
      env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
    });
    assert.equal(run.code, 0, run.stderr);
    const replies = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const result = (id: number) => replies.find((r) => r.id === id)?.result;
    assert.match(result(1).content[0].text, /mcp-side \/secret-path/);
    assert.match(result(1).content[0].text, /Blocked by Deft: evil\.test:80/);
    assert.deepEqual(result(1)._meta["deft/network"].map(pick), [
      ["127.0.0.1", server.port, true, "allowed"],
      ["evil.test", 80, false, "not in allow list"],
    ]);
    assert.equal(result(2)._meta, undefined, "a call that used no network carries nothing");
    assert.deepEqual(result(3)._meta["deft/network"].map(pick), [
      ["other.test", 8443, false, "not in allow list"],
    ]);
    assert.doesNotMatch(JSON.stringify(replies.map((r) => r.result?._meta)), /secret-path/);
    assert.match(run.stderr, /deft mcp: network: blocked evil\.test:80 \(not in allow list\)/);
    assert.match(run.stderr, /deft mcp: network: blocked other\.test:8443 \(not in allow list\)/);
  } finally {
    await server.close();
  }
});
