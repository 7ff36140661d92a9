/**
 * What the network-list tests put on the host's loopback, and what they run on the other side of
 * Deft's proxy: a small HTTP server that records the paths it was asked, and a python3 probe that
 * fetches URLs through the proxy variables and once around them.
 */
import http from "node:http";

/** A recording server on 127.0.0.1: its port, the paths it was asked, and how to stop it. */
export interface LoopbackServer {
  port: number;
  paths: string[];
  close: () => Promise<void>;
}

/**
 * A server on 127.0.0.1 that answers `NAME PATH` and records every path it was asked. `serve`,
 * when given, may answer a request itself first (it returns true when it did).
 */
export async function loopbackServer(
  name: string,
  serve?: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>,
): Promise<LoopbackServer> {
  const paths: string[] = [];
  const srv = http.createServer(async (req, res) => {
    paths.push(req.url ?? "");
    if (serve && await serve(req, res)) return;
    res.end(`${name} ${req.url}\n`);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  return { port, paths, close: () => new Promise<void>((r) => srv.close(() => r())) };
}

/**
 * Python for inside the sandbox or container: fetches `http://localhost:ALLOWED/ok`,
 * `http://localhost:OTHER/private` and each of `more` through the proxy variables, then
 * `http://127.0.0.1:ALLOWED/direct` with no proxy; prints `URL -> what came back` for each.
 */
export function proxyProbe(allowed: number, other: number, more: string[] = []): string {
  const urls = [`http://localhost:${allowed}/ok`, `http://localhost:${other}/private`, ...more];
  return `
import urllib.request, urllib.error
def get(url, opener=urllib.request.build_opener()):
    try:
        print(url, "->", opener.open(url, timeout=20).read().decode().strip())
    except urllib.error.HTTPError as e:
        print(url, "->", e.code, e.read().decode().strip())
    except Exception as e:
        print(url, "-> failed:", type(e).__name__)
${urls.map((url) => `get("${url}")\n`).join("")}\
get("http://127.0.0.1:${allowed}/direct", urllib.request.build_opener(urllib.request.ProxyHandler({})))
`;
}
