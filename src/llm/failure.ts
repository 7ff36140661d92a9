/**
 * What went wrong with a model call, in words a user can act on. SDKs wrap network failures in
 * a bare "Connection error." whose real cause (DNS, a refused port, TLS) sits several `cause`s
 * deep; HTTP failures carry a status and the provider's own message. `classifyFailure` reads
 * both and decides whether a retry can help: a name that does not resolve, a port nobody
 * listens on, a bad certificate or a 401/403/404 will not fix themselves in a minute.
 */

/** The kinds of failure Deft tells apart. */
export type FailureKind =
  | "dns"
  | "refused"
  | "tls"
  | "timeout"
  | "network"
  | "auth"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "rate_limit"
  | "server"
  | "request"
  | "aborted"
  | "other";

/** A classified failure. */
export interface Failure {
  kind: FailureKind;
  status?: number;
  retryable: boolean;
  /** One sentence naming the URL (when known), what happened and what to do. */
  message: string;
}

/** The statuses that are retried: request timeout, rate limit and every server error. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Every message along the `cause` chain, outermost first. */
function causeMessages(error: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  for (let e = error; e !== undefined && e !== null && !seen.has(e); e = (e as Error).cause) {
    seen.add(e);
    const name = (e as Error).name ?? "";
    const message = e instanceof Error ? e.message : String(e);
    out.push(`${name}: ${message}`);
  }
  return out;
}

/** The URL a low-level fetch error names (`error sending request for url (…)`), if any. */
function failedUrl(chain: string[]): string | undefined {
  for (const text of chain) {
    const match = /for url \(([^)\s]+)\)/.exec(text);
    if (match) return match[1];
  }
  return undefined;
}

/** The HTTP status an SDK error carries, if any. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown })?.status;
  return typeof status === "number" ? status : undefined;
}

/** Classifies `error` from a call to `endpoint` (the configured base URL, when known). */
export function classifyFailure(error: unknown, endpoint?: string): Failure {
  const chain = causeMessages(error);
  const all = chain.join(" | ");
  const url = failedUrl(chain) ?? endpoint;
  const at = url ? ` ${url}` : " the model endpoint";
  const status = statusOf(error);
  const detail = providerMessage(error);
  if (status !== undefined) {
    const says = detail ? `: ${detail}` : "";
    const base = { status, retryable: isRetryableStatus(status) };
    if (status === 401) {
      return {
        ...base,
        kind: "auth",
        message: `${url ?? "the provider"} refused the API key (HTTP 401${says}). Check the key ` +
          "(-k, <PROVIDER>_API_KEY or the config file).",
      };
    }
    if (status === 403) {
      return {
        ...base,
        kind: "forbidden",
        message: `${url ?? "the provider"} denied access (HTTP 403${says}). The key may lack ` +
          "access to this model or region.",
      };
    }
    if (status === 404) {
      return {
        ...base,
        kind: "not_found",
        message: `${url ?? "the provider"} answered 404 Not Found${says}. Check the model name ` +
          "(-m) and the base URL (--model-base-url).",
      };
    }
    if (status === 409) {
      return { ...base, kind: "conflict", message: `HTTP 409 from${at}${says}` };
    }
    if (status === 429) {
      return { ...base, kind: "rate_limit", message: `rate limited by${at} (HTTP 429${says})` };
    }
    if (status === 408) return { ...base, kind: "timeout", message: `HTTP 408 from${at}${says}` };
    if (status >= 500) {
      return { ...base, kind: "server", message: `server error from${at} (HTTP ${status}${says})` };
    }
    return { ...base, kind: "request", message: `HTTP ${status} from${at}${says}` };
  }
  const name = (error as { name?: string })?.name ?? "";
  if (name === "AbortError") {
    return { kind: "aborted", retryable: false, message: "the model call was interrupted" };
  }
  if (
    /dns error|failed to lookup address|name or service not known|getaddrinfo|ENOTFOUND/i.test(all)
  ) {
    return {
      kind: "dns",
      retryable: false,
      message: `cannot reach${at}: its host name does not resolve (DNS). Check the base URL ` +
        "(--model-base-url or base_url) and your network.",
    };
  }
  if (/connection refused|ECONNREFUSED|requests to port \d+ are blocked/i.test(all)) {
    return {
      kind: "refused",
      retryable: false,
      message: `cannot reach${at}: the connection was refused (nothing listens there). Is the ` +
        "server running, and is the port in the base URL right?",
    };
  }
  if (/certificate|tls|ssl|handshake|corrupt message|InvalidContentType/i.test(all)) {
    return {
      kind: "tls",
      retryable: false,
      message: `cannot reach${at}: the TLS handshake failed (${lastLine(chain)}). Check http:// ` +
        "versus https:// and the server's certificate.",
    };
  }
  if (/timeout|timed out/i.test(all)) {
    return { kind: "timeout", retryable: true, message: `the request to${at} timed out` };
  }
  if (/ECONNRESET|connection|network|fetch failed|socket|broken pipe|reset by peer/i.test(all)) {
    return {
      kind: "network",
      retryable: true,
      message: `the connection to${at} failed (${lastLine(chain)})`,
    };
  }
  return { kind: "other", retryable: false, message: lastLine(chain) };
}

function lastLine(chain: string[]): string {
  const innermost = chain[chain.length - 1] ?? "unknown error";
  return innermost.replace(/^[A-Za-z]*Error: /, "").replace(/^: /, "");
}

/** The provider's own words from an SDK error: `error.message` of the JSON body, when present. */
function providerMessage(error: unknown): string | undefined {
  const e = error as { error?: unknown; message?: string };
  const body = e?.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const fromBody = typeof body?.message === "string"
    ? body.message
    : typeof body?.error?.message === "string"
    ? body.error.message
    : undefined;
  if (fromBody) return fromBody;
  const message = typeof e?.message === "string" ? e.message : undefined;
  if (!message) return undefined;
  // SDK messages look like `401 {"error": …}` or `401 Unauthorized`; drop the repeated status.
  return message.replace(/^\d{3}\s*/, "").trim() || undefined;
}
