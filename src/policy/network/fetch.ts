/**
 * One bounded HTTP(S) GET through the network proxy (proxy.ts), for Deft's own `web_fetch`: the
 * same list and the same checks as the sandbox's, every redirect asked of the proxy again, the
 * body cut at a size, the whole at a time. Deno's `fetch` speaks to the proxy's Unix socket
 * (`CONNECT` for https), so this process never connects anywhere the proxy would not.
 */
import { ensureNetworkProxy } from "./mod.ts";
import { onNetworkDecision } from "./decisions.ts";
import type { NetworkList } from "./rules.ts";

/** What `fetchThroughList` brings back. */
export interface FetchedPage {
  /** The URL the body came from, after redirects. */
  url: string;
  status: number;
  contentType: string;
  body: Uint8Array;
  /** The body was longer than the limit and was cut there. */
  truncated: boolean;
}

/** The bounds of one fetch. */
export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

/** A fetch refused or failed; the message is for the model. */
export class FetchRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FetchRefusedError";
  }
}

/** GETs `url` through the proxy for `list`, within `limits`. Throws `FetchRefusedError`. */
export async function fetchThroughList(
  list: NetworkList,
  url: string,
  limits: FetchLimits,
): Promise<FetchedPage> {
  const proxy = await ensureNetworkProxy(list);
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: proxy.socketPath } });
  const signal = AbortSignal.timeout(limits.timeoutMs);
  // The proxy's own word on each hop: a refused tunnel reaches fetch only as a failed CONNECT.
  let refusal: string | undefined;
  let current = checkUrl(url);
  const stop = onNetworkDecision((d) => {
    const port = Number(current.port || (current.protocol === "https:" ? 443 : 80));
    if (!d.allowed && d.host === current.hostname && d.port === port) {
      refusal = `Blocked by Deft: ${d.host}:${d.port} ${d.reason}`;
    }
  });
  const refused = () =>
    refusal && new FetchRefusedError(`${refusal} (network.allow in the config decides)`);
  try {
    for (let hop = 0;; hop++) {
      refusal = undefined;
      const response = await fetch(current, { client, redirect: "manual", signal });
      if (refusal) {
        await response.body?.cancel();
        throw refused();
      }
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        if (hop >= limits.maxRedirects) {
          throw new FetchRefusedError(`more than ${limits.maxRedirects} redirects from ${url}`);
        }
        // The next hop is checked like the first: scheme here, host and port by the proxy.
        current = checkUrl(new URL(location, current).href);
        continue;
      }
      const { body, truncated } = await readBounded(response, limits.maxBytes);
      return {
        url: current.href,
        status: response.status,
        contentType: response.headers.get("content-type") ?? "",
        body,
        truncated,
      };
    }
  } catch (e) {
    if (e instanceof FetchRefusedError) throw e;
    if (refusal) throw refused();
    if (signal.aborted) {
      throw new FetchRefusedError(`${url} took longer than ${limits.timeoutMs / 1000} s`);
    }
    throw new FetchRefusedError(`cannot fetch ${current.href}: ${(e as Error).message}`);
  } finally {
    stop();
    client.close();
  }
}

function checkUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FetchRefusedError(`${JSON.stringify(text)} is not a URL; give http://… or https://…`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchRefusedError(`only http and https URLs can be fetched, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new FetchRefusedError("a URL with credentials in it is not fetched");
  }
  return url;
}

async function readBounded(
  response: Response,
  maxBytes: number,
): Promise<{ body: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      chunks.push(value.length > room ? value.subarray(0, room) : value);
      size += Math.min(value.length, room);
      if (value.length >= room && size >= maxBytes) {
        truncated = value.length > room || !(await reader.read()).done;
        await reader.cancel().catch(() => {});
        break;
      }
    }
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return { body, truncated };
}
