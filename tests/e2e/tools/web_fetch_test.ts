/**
 * `web_fetch` through the network list: a local page turned into text, a redirect chain, a
 * redirect to a host the list does not allow, a 50 MB response cut at the bound, binary refused,
 * and no list at all. The pages are the test's own server on loopback, allowed by address.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { runDeft, trustedHome } from "../../helpers/deft.ts";

const PAGE = "<!doctype html><html><head><title>T</title><script>var hidden = 1;</script>" +
  "</head><body><h1>Release notes</h1><p>See <a href='/docs'>the docs</a>.</p></body></html>";

Deno.test("web_fetch: pages, redirects, bounds and the list", async () => {
  const served: string[] = [];
  const srv = http.createServer((req, res) => {
    served.push(req.url ?? "");
    const port = (srv.address() as { port: number }).port;
    switch (req.url) {
      case "/page":
        return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
      case "/r1":
        return void res.writeHead(302, { location: "/r2" }).end();
      case "/r2":
        return void res.writeHead(301, { location: `http://127.0.0.1:${port}/page` }).end();
      case "/away":
        return void res.writeHead(302, { location: "http://evil.test/steal" }).end();
      case "/png":
        return void res.writeHead(200, { "content-type": "image/png" }).end("\x89PNG\r\n");
      case "/big": {
        res.writeHead(200, { "content-type": "text/plain" });
        const line = "x".repeat(1023) + "\n";
        let sent = 0;
        const more = () => {
          while (sent < 50 * 1024) {
            sent++;
            if (!res.write(line)) return void res.once("drain", more);
          }
          res.end();
        };
        return void more();
      }
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  const home = await trustedHome("deft-web-fetch-");
  const env = { HOME: home, XDG_CONFIG_HOME: `${home}/.config` };
  const config = `${home}/.config/deft/config.yaml`;
  const userConfig = await Deno.readTextFile(config);
  await Deno.writeTextFile(config, userConfig + `network:\n  allow: ["127.0.0.1:${port}"]\n`);
  const call = async (path: string) => {
    const run = await runDeft(
      ["tool", "web_fetch", JSON.stringify({ url: `http://127.0.0.1:${port}${path}` })],
      { cwd: home, env },
    );
    return JSON.parse(run.stdout || "{}") as { success: boolean; output: string; error: string };
  };
  try {
    const page = await call("/page");
    assert.ok(page.success, page.error);
    assert.match(
      page.output,
      new RegExp(`^http://127\\.0\\.0\\.1:${port}/page \\(HTTP 200, text/html\\)`),
    );
    assert.match(page.output, /RELEASE NOTES/);
    assert.match(page.output, /See the docs \[\/docs\]\./);
    assert.doesNotMatch(page.output, /hidden|<h1>/);

    const chain = await call("/r1");
    assert.ok(chain.success, chain.error);
    assert.match(chain.output, new RegExp(`^http://127\\.0\\.0\\.1:${port}/page `));

    const away = await call("/away");
    assert.equal(away.success, false);
    assert.match(away.error, /Blocked by Deft: evil\.test:80 not in allow list/);

    const started = performance.now();
    const big = await call("/big");
    assert.ok(big.success, big.error);
    assert.match(big.output, /\[cut: only the first 2 MB were read\]$/);
    assert.ok(big.output.length < 200_000, "the model gets a bounded text");
    assert.ok(performance.now() - started < 20_000);

    const png = await call("/png");
    assert.equal(png.success, false);
    assert.match(png.error, /is image\/png content, which is not fetched as text/);

    // Without a list, nothing is fetched.
    await Deno.writeTextFile(config, userConfig);
    const none = await call("/page");
    assert.equal(none.success, false);
    assert.match(none.error, /none is configured: add the host to network\.allow/);
    assert.equal(served.filter((p) => p === "/page").length, 2, "the last call sent nothing");
  } finally {
    await new Promise<void>((r) => srv.close(() => r()));
  }
});
