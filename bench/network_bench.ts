/**
 * The network list's cost, proxy against direct, in the same run: curl inside the sandbox
 * reaching a server of this process on loopback, once through Deft's proxy (the sandbox's own
 * network namespace, the forwarder, the proxy's checks) and once directly (the same sandbox
 * sharing the host's network, as `allow_network: true` does). Two figures: the added time of one
 * small request (median of rounds of sequential curls, run inside one shell so no sandbox start
 * is counted), and a 100 MB download's time ratio, both as plain HTTP (an absolute-form request:
 * node:http checks its head, then the proxy sends one rewritten head natively and relays the
 * answer raw, plain.ts) and tunnelled (`CONNECT`, as every HTTPS download goes: the proxy then
 * only relays bytes). Targets: <= +5 ms a request, <= 1.1x download.
 *
 * On loopback the direct path moves gigabytes a second, so the two extra relays (the forwarder
 * and the proxy, both copying in user space) show as a large ratio; `--rate R` paces the server
 * at R MB/s, as a real link would, to show the ratio where the link is the bottleneck. Where the
 * time goes (CPU per GB relayed, measured with server, proxy and forwarder in processes of their
 * own on a loaded 2-core machine): the forwarder ~0.5 s (Deno reads and writes through 256 KiB
 * buffers, `splice` in forwarder.ts; alone on an idle relay ~0.3 s, where `pipeTo` costs ~0.5 s
 * and node:net `pipe()` ~0.7 s), the proxy ~0.45 s for a tunnel (node:http parses the CONNECT
 * head, then the connection is relayed by the same `splice`; it was ~1.0-1.4 s through Node
 * streams). A plain-HTTP download now costs what a tunnel does (same time in this bench, 2.1-2.3x
 * direct on a loaded machine, where forwarding the answer through node:http's response parsing
 * and piping cost ~1.8-2.2 s CPU per GB and 6.7-7.9x direct). Each relay copies every byte
 * through user space twice, so on raw loopback, where the direct path costs ~0.1-0.2 s per GB,
 * the ratio stays well above 1.1x: with both relays on idle cores of their own the download is
 * bound by the slowest (~0.3-0.45 s/GB, 2-3x); on a
 * loaded 2-core machine their costs add up. Over a real link (tens of MB/s) the relays' CPU fits
 * in the time the bytes take to arrive. The server here shares this process's one JavaScript
 * thread with the proxy, so the proxied figures also carry the server's work in the proxy's way
 * (a remote server's would not): they are an upper bound.
 *
 * Usage: `deno run -A bench/network_bench.ts [--requests N] [--mb M] [--rate MB_PER_S]`
 */
import http from "node:http";
import { processPolicy, runChild, taskTestLaunch } from "../src/policy/process.ts";
import { startNetworkProxy } from "../src/policy/network/proxy.ts";
import { parseEntry } from "../src/policy/network/rules.ts";

const args = Deno.args;
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const REQUESTS = option("--requests", 40);
const MB = option("--mb", 100);
const RATE = option("--rate", 0);
const ROUNDS = 5;

const chunk = new Uint8Array(1024 * 1024).fill(120);
const server = http.createServer((req, res) => {
  if (req.url === "/big") {
    res.writeHead(200, { "content-length": String(MB * chunk.length) });
    let sent = 0;
    const start = performance.now();
    const more = () => {
      while (sent < MB) {
        // Paced: never ahead of RATE MB/s.
        const due = RATE > 0 ? start + (sent / RATE) * 1000 - performance.now() : 0;
        if (due > 0) return void setTimeout(more, due);
        sent++;
        if (!res.write(chunk)) return void res.once("drain", more);
      }
      res.end();
    };
    more();
    return;
  }
  res.end("small\n");
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
const port = (server.address() as { port: number }).port;
const proxy = await startNetworkProxy({
  list: { allow: [parseEntry(`127.0.0.1:${port}`)], deny: [] },
});
const workspace = await Deno.makeTempDir({ prefix: "deft-net-bench-" });
const proxied = processPolicy(workspace, {
  sandbox: "workspace-write",
  networkProxy: proxy.socketPath,
});
const direct = processPolicy(workspace, { sandbox: "workspace-write", allowNetwork: true });

/** Runs `script` in the sandbox of `policy`; its stdout, trimmed. */
async function inside(policy: typeof direct, script: string): Promise<string> {
  const out = await runChild(taskTestLaunch(policy, script, {}));
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

const url = (path: string) => `http://127.0.0.1:${port}${path}`;
// Milliseconds of N sequential small requests, timed inside the shell.
const requests = (extra: string) =>
  `s=$(date +%s%N); for i in $(seq ${REQUESTS}); do curl -sS ${extra} -o /dev/null ` +
  `${url("/small")}; done; e=$(date +%s%N); echo $(( (e - s) / 1000 ))`;
const download = (extra: string) =>
  `curl -sS ${extra} -o /dev/null -w '%{time_total}' ${url("/big")}`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perRequest: { proxy: number[]; direct: number[] } = { proxy: [], direct: [] };
const downloads: { proxy: number[]; tunnel: number[]; direct: number[] } = {
  proxy: [],
  tunnel: [],
  direct: [],
};
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, so load falls on both alike.
    perRequest.proxy.push(Number(await inside(proxied, requests(""))) / 1000 / REQUESTS);
    perRequest.direct.push(
      Number(await inside(direct, requests("--noproxy '*'"))) / 1000 / REQUESTS,
    );
    downloads.proxy.push(Number(await inside(proxied, download(""))));
    downloads.tunnel.push(Number(await inside(proxied, download("--proxytunnel"))));
    downloads.direct.push(Number(await inside(direct, download("--noproxy '*'"))));
  }
} finally {
  await proxy.close();
  server.close();
  await Deno.remove(workspace, { recursive: true });
}
const added = median(perRequest.proxy) - median(perRequest.direct);
const ratio = median(downloads.proxy) / median(downloads.direct);
const tunnelRatio = median(downloads.tunnel) / median(downloads.direct);
console.log(
  `one request: ${median(perRequest.direct).toFixed(2)} ms direct, ` +
    `${median(perRequest.proxy).toFixed(2)} ms through the proxy: +${added.toFixed(2)} ms ` +
    `(target <= +5 ms)`,
);
console.log(
  `${MB} MB download${RATE > 0 ? ` at ${RATE} MB/s` : ""}: ${
    median(downloads.direct).toFixed(3)
  } s direct, ` +
    `${median(downloads.proxy).toFixed(3)} s through the proxy: ${ratio.toFixed(2)}x, ` +
    `${median(downloads.tunnel).toFixed(3)} s tunnelled (as HTTPS): ${tunnelRatio.toFixed(2)}x ` +
    `(target <= 1.1x)`,
);
