/**
 * The forwarder's command line (launch.ts) and its own argument check (forwarder.ts): Deft itself
 * as `__network-forwarder PORT SOCKET`, with narrow permissions under Deno and nothing more for a
 * compiled Deft, which cannot be built here (no denort) but whose argv is the same code's.
 */
import assert from "node:assert/strict";
import {
  FORWARDER_PORT,
  forwarderArgv,
  forwarderCode,
  forwarderFiles,
} from "../../../src/policy/network/launch.ts";
import { FORWARDER_COMMAND, parseForwarderArgs } from "../../../src/policy/network/forwarder.ts";

const SOCKET = "/tmp/deft-net-x/proxy.sock";
/** The SOCKS5 server's socket, beside the proxy's. */
const SOCKS = "/tmp/deft-net-x/socks.sock";

Deno.test("forwarder argv: a compiled Deft is the executable and the internal command alone", () => {
  // The container's compiled Deft, and this host's had it been compiled: no Deno flags at all.
  assert.deepEqual(forwarderArgv(SOCKET, "/opt/deft/deft", "/opt/deft/deft"), [
    "/opt/deft/deft",
    "__network-forwarder",
    String(FORWARDER_PORT),
    SOCKET,
    "1080",
    SOCKS,
  ]);
  assert.deepEqual(forwarderArgv(SOCKET, "/usr/local/bin/deft", "file:///anything/main.ts"), [
    "/usr/local/bin/deft",
    "__network-forwarder",
    "3128",
    SOCKET,
    "1080",
    SOCKS,
  ]);
});

Deno.test("forwarder argv: under Deno, main.ts with the port, the socket and its own code only", () => {
  const argv = forwarderArgv(SOCKET, "/opt/deft/deno", "/opt/deft/code/main.ts");
  const at = argv.indexOf("/opt/deft/code/main.ts");
  assert.ok(at > 0);
  assert.deepEqual(argv.slice(0, 2), ["/opt/deft/deno", "run"]);
  assert.deepEqual(argv.slice(at + 1), [FORWARDER_COMMAND, "3128", SOCKET, "1080", SOCKS]);
  const flags = argv.slice(2, at);
  assert.deepEqual(flags.filter((f) => f.startsWith("--allow-") || f.startsWith("-A")), [
    `--allow-net=127.0.0.1:3128,127.0.0.1:1080,unix:${SOCKET},unix:${SOCKS}`,
    `--allow-read=${SOCKET},${SOCKS},/opt/deft/code/main.ts,/opt/deft/code/src/policy/network/forwarder.ts`,
    `--allow-write=${SOCKET},${SOCKS}`,
  ]);
  // Offline, and no configuration or lock file of the repository it starts in.
  for (const f of ["--no-config", "--no-lock", "--cached-only", "--no-prompt"]) {
    assert.ok(flags.includes(f), f);
  }
  // The second pair (the SOCKS5 server's socket beside the proxy's) from the bundle too.
  const bundle = forwarderArgv(SOCKET, "/opt/deft/deno", "/opt/deft/deft.js");
  assert.deepEqual(bundle.slice(-5), [FORWARDER_COMMAND, "3128", SOCKET, "1080", SOCKS]);
  assert.ok(bundle.includes(`--allow-read=${SOCKET},${SOCKS},/opt/deft/deft.js`));
  // The bundle reads itself, nothing else.
  assert.deepEqual(forwarderCode("/opt/deft/deft.js"), ["/opt/deft/deft.js"]);
});

Deno.test("forwarder argv: from this source tree it runs main.ts, shown read-only in the sandbox", () => {
  const argv = forwarderArgv(SOCKET);
  const main = new URL("../../../main.ts", import.meta.url).pathname;
  assert.equal(argv[0], Deno.execPath());
  assert.equal(argv[argv.length - 6], main);
  const files = forwarderFiles();
  assert.ok(files.includes(main) && files.includes(Deno.execPath()));
  assert.ok(files.some((f) => f.endsWith("/src/policy/network/forwarder.ts")));
});

Deno.test("forwarder arguments: PORT SOCKET pairs, each checked, else a clear refusal", () => {
  assert.deepEqual(parseForwarderArgs(["3128", "/s/p.sock"]), [{
    port: 3128,
    socket: "/s/p.sock",
  }]);
  assert.deepEqual(parseForwarderArgs(["3128", "/a", "1080", "/b"]), [
    { port: 3128, socket: "/a" },
    { port: 1080, socket: "/b" },
  ]);
  const refused: [string[], RegExp][] = [
    [[], /not a command for users.*Got 0 argument/],
    [["3128"], /Got 1 argument/],
    [["0", "/s"], /"0" is not a port/],
    [["65536", "/s"], /"65536" is not a port/],
    [["0x50", "/s"], /"0x50" is not a port/],
    [["3128 ", "/s"], /is not a port/],
    [["-1", "/s"], /is not a port/],
    [["3128", "relative.sock"], /"relative.sock" is not an absolute socket path/],
    [["3128", "/s\n--allow-all"], /is not an absolute socket path/],
    [["3128", "/a", "3128", "/b"], /Port 3128 is given twice/],
  ];
  for (const [args, why] of refused) {
    const got = parseForwarderArgs(args);
    assert.ok(got instanceof Error, JSON.stringify(args));
    assert.match(got.message, why);
    assert.match(got.message, /PORT SOCKET pairs/);
  }
});
