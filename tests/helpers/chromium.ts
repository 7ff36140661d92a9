/**
 * Headless Chromium (Debian's `chromium`) driven over the DevTools protocol on 127.0.0.1, with
 * Deno's own WebSocket: open a page with scripts on or off, and see its console errors, the network
 * requests it made, its DOM (by evaluating an expression) and a screenshot.
 */

/** What a page did while loading. */
export interface PageLog {
  /** Console errors, uncaught exceptions and browser log errors (a CSP violation among them). */
  errors: string[];
  /** Every request other than the page itself. */
  requests: string[];
}

type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  sessionId?: string;
  result?: unknown;
  error?: { message: string };
};

/** A running headless Chromium; `await using` closes it. */
export class Chromium implements AsyncDisposable {
  #id = 0;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #listeners: ((m: Message) => void)[] = [];

  private constructor(readonly child: Deno.ChildProcess, readonly socket: WebSocket) {
    socket.onmessage = (event) => {
      const message: Message = JSON.parse(String(event.data));
      if (message.id !== undefined) {
        const waiting = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.error) waiting?.reject(new Error(message.error.message));
        else waiting?.resolve(message.result);
      } else {
        for (const listener of this.#listeners) listener(message);
      }
    };
  }

  /** Starts Chromium with a fresh profile in `profile` (a temp folder). */
  static async launch(profile: string): Promise<Chromium> {
    const child = new Deno.Command("chromium", {
      args: [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        `--user-data-dir=${profile}`,
        "--window-size=1200,900",
        "about:blank",
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const url = await devtoolsUrl(child.stderr);
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error(`cannot connect to Chromium at ${url}`));
    });
    return new Chromium(child, socket);
  }

  /** Sends one DevTools command (to a page when `session` is given). */
  // deno-lint-ignore no-explicit-any
  send(method: string, params: Record<string, unknown> = {}, session?: string): Promise<any> {
    const id = ++this.#id;
    this.socket.send(JSON.stringify({ id, method, params, sessionId: session }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  /**
   * Opens `url` in a new tab, scripts on or off, and waits for its load event. Returns the tab's
   * session and what the page did while loading.
   */
  async open(
    url: string,
    options: { scripts: boolean; timeout?: number },
  ): Promise<{ session: string; log: PageLog }> {
    const { targetId } = await this.send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await this.send("Target.attachToTarget", { targetId, flatten: true });
    const log: PageLog = { errors: [], requests: [] };
    let loaded: () => void = () => {};
    const load = new Promise<void>((resolve) => loaded = resolve);
    this.#listeners.push((m) => {
      if (m.sessionId !== sessionId) return;
      const p = m.params ?? {};
      if (m.method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "assert")) {
        log.errors.push(`console: ${JSON.stringify(p.args)}`);
      } else if (m.method === "Runtime.exceptionThrown") {
        log.errors.push(`exception: ${JSON.stringify(p.exceptionDetails)}`);
      } else if (m.method === "Log.entryAdded") {
        const entry = p.entry as { level: string; text: string };
        if (entry.level === "error") log.errors.push(`log: ${entry.text}`);
      } else if (m.method === "Network.requestWillBeSent") {
        const request = p.request as { url: string };
        if (request.url !== url) log.requests.push(request.url);
      } else if (m.method === "Page.loadEventFired") {
        loaded();
      }
    });
    for (const domain of ["Runtime", "Log", "Network", "Page"]) {
      await this.send(`${domain}.enable`, {}, sessionId);
    }
    if (!options.scripts) {
      await this.send("Emulation.setScriptExecutionDisabled", { value: true }, sessionId);
    }
    await this.send("Page.navigate", { url }, sessionId);
    const limit = options.timeout ?? 30_000;
    await deadline(load, limit, `${url} did not finish loading in ${limit / 1000} s`);
    // Let anything the page started late (a request, an error) arrive.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { session: sessionId, log };
  }

  /** The value of `expression` in the page (run by DevTools, so also with the page's scripts off). */
  async evaluate<T>(session: string, expression: string): Promise<T> {
    const answer = await this.send(
      "Runtime.evaluate",
      {
        expression,
        returnByValue: true,
        awaitPromise: true,
      },
      session,
    );
    if (answer.exceptionDetails) {
      throw new Error(`${expression}: ${JSON.stringify(answer.exceptionDetails)}`);
    }
    return answer.result.value as T;
  }

  /** A PNG of the page as shown. */
  async screenshot(session: string): Promise<Uint8Array> {
    const { data } = await this.send("Page.captureScreenshot", { format: "png" }, session);
    return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await deadline(this.send("Browser.close"), 5_000, "").catch(() => {});
    this.socket.close();
    const status = this.child.status;
    const exited = await deadline(status, 5_000, "").then(() => true, () => false);
    if (!exited) {
      this.child.kill("SIGKILL");
      await status;
    }
  }
}

function deadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Reads Chromium's stderr up to the `DevTools listening on ws://…` line; keeps draining it after. */
async function devtoolsUrl(stderr: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const found = (async () => {
    while (true) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`chromium exited before DevTools listened:\n${seen}`);
      seen += value;
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(seen);
      if (match) return match[1];
    }
  })();
  const url = await deadline(found, 30_000, `chromium did not start DevTools in 30 s:\n${seen}`);
  (async () => {
    while (!(await reader.read()).done) { /* drain, so Chromium never blocks on a full pipe */ }
  })().catch(() => {});
  return url;
}
