/**
 * `/rewind` ends the background shells of the turns it takes back (mock model, real bash and
 * python3 http.server): turn 1 starts server A, turn 2 server B; `/rewind 1` kills B (its port is
 * free, its process gone) while A runs on and still answers, until the session ends.
 */
import assert from "node:assert/strict";
import { interactiveOnStdin } from "../../../helpers/deft.ts";
import { eventually, pidsByCmdline } from "../../../helpers/bash.ts";
import { chatText, chatToolCalls, MockLLM } from "../../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../../helpers/repo.ts";
import { tempDir } from "../../../helpers/temp.ts";

/** A port nothing listens on now. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

// Run in the session's shell (its sandbox, its network): which of the two ports answer.
const PROBE = [
  "import socket, sys",
  "for name, port in (('A', int(sys.argv[1])), ('B', int(sys.argv[2]))):",
  "    s = socket.socket()",
  "    s.settimeout(2)",
  "    state = 'open' if s.connect_ex(('127.0.0.1', port)) == 0 else 'closed'",
  "    print(f'port {name} {state}')",
  "    s.close()",
].join("\n");

Deno.test("background (interactive): /rewind kills the shells of the turns taken back, keeps the others", async () => {
  await using homeTemp = await tempDir();
  const repo = await makeBuggyRepo();
  const portA = freePort();
  let portB = freePort();
  while (portB === portA) portB = freePort();
  const server = (port: number) => `python3 -m http.server ${port} --bind 127.0.0.1`;
  // Each server announces itself when it listens; the turn waits for that.
  const start = (port: number) =>
    [
      "bash",
      { command: server(port), run_in_background: true },
    ] as [string, unknown];
  const waitFor = (port: number) =>
    [
      "bash",
      {
        command: `for i in $(seq 200); do python3 -c "import socket; socket.create_connection(` +
          `('127.0.0.1', ${port}), 1)" 2>/dev/null && break; sleep 0.1; done; echo ready`,
      },
    ] as [string, unknown];
  const mock = MockLLM.start([
    chatToolCalls([start(portA)]),
    chatToolCalls([waitFor(portA)]),
    chatText("Server A is up."),
    chatToolCalls([start(portB)]),
    chatToolCalls([waitFor(portB)]),
    chatText("Server B is up."),
    chatToolCalls([["bash", {
      command: `python3 -c "$(cat <<'PY'\n${PROBE}\nPY\n)" ${portA} ${portB}`,
    }]]),
    chatText("Probed."),
  ]);
  try {
    const r = await interactiveOnStdin(
      repo,
      mock,
      "start server A\nstart server B\n/rewind 1 both\n/status\nprobe the ports\nexit\n",
      {
        args: ["--approval", "never"],
        cwd: repo,
        env: { HOME: homeTemp.path, XDG_STATE_HOME: `${homeTemp.path}/state` },
      },
    );
    const out = r.stderr + r.stdout;
    assert.equal(r.code, 0, out);
    assert.match(out, /rewound the files and the conversation to checkpoint 1/, out);
    // In the session's own shell after the rewind: A answers, B's port is free.
    const probe = JSON.stringify(mock.requests.at(-1)?.body.messages.at(-1));
    assert.match(probe, /port A open/, probe);
    assert.match(probe, /port B closed/, probe);
    // /status: A runs, B was killed.
    assert.match(out, new RegExp(`running .*http\\.server ${portA} `), out);
    assert.match(out, new RegExp(`killed .*http\\.server ${portB} `), out);
    // The rewind says what it ended: B's shell, not A's.
    assert.match(
      out,
      new RegExp(
        `ended the background shells the turns after turn 1 started:\\n {2}bg-[0-9a-f]{24} {2}` +
          `python3 -m http\\.server ${portB} `,
      ),
      out,
    );
    // And leaving the session ended A too: no server is left.
    assert.ok(await eventually(async () => (await pidsByCmdline(server(portA))).length === 0));
    assert.deepEqual(await pidsByCmdline(server(portB)), []);
  } finally {
    await mock.close();
  }
});
