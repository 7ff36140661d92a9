/**
 * `web_fetch`: one page, through the network proxy and the user's list (policy/network/fetch.ts),
 * size and time bounded, HTML turned into text by `html-to-text`, binary refused. Runs in Deft's
 * own process (the sandboxed hosts have no network); the approval gate asks about each call in
 * `commands` mode unless a `fetch HOST` rule allows the URL's host (its catalog entry's effect).
 */
import { convert } from "html-to-text";
import { fail, ok, Tool, type ToolExecResult } from "../base.ts";
import { FetchRefusedError, fetchThroughList } from "../../policy/network/fetch.ts";
import { WEB_FETCH } from "./definition.ts";

/** Bytes read from a response at most (the rest is cut, and the answer says so). */
export const WEB_FETCH_MAX_BYTES = 2 * 1024 * 1024;
/** Characters of text handed to the model at most. */
const MAX_TEXT = 100_000;
const TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 5;

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|xhtml\+xml|javascript|[a-z.+-]*\+json|[a-z.+-]*\+xml)\b)/i;

/** `web_fetch {"url"}`: the page as text. */
export class WebFetchTool extends Tool {
  readonly name = WEB_FETCH.name;
  readonly description = WEB_FETCH.description;
  readonly parameters = WEB_FETCH.parameters;

  async execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    const url = String(args.url ?? "");
    const list = this.context.settings.network;
    if (!list || list.allow.length === 0) {
      return fail(
        "web_fetch can reach only the hosts of a network list, and none is configured: add " +
          "the host to network.allow in the config (docs/sandbox.md).",
      );
    }
    let page;
    try {
      page = await fetchThroughList(list, url, {
        maxBytes: WEB_FETCH_MAX_BYTES,
        timeoutMs: TIMEOUT_MS,
        maxRedirects: MAX_REDIRECTS,
      });
    } catch (e) {
      if (e instanceof FetchRefusedError) return fail(`web_fetch: ${e.message}`);
      throw e;
    }
    const type = page.contentType.split(";")[0].trim().toLowerCase();
    if ((type && !TEXT_TYPES.test(type)) || page.body.includes(0)) {
      return fail(
        `web_fetch: ${page.url} is ${type || "binary"} content, which is not fetched as text; ` +
          "download it with the shell (curl) if it is needed.",
      );
    }
    const raw = new TextDecoder().decode(page.body);
    const html = type === "text/html" || type === "application/xhtml+xml" ||
      (!type && /^\s*<(!doctype html|html)/i.test(raw));
    let text = html ? convert(raw, { wordwrap: false }) : raw;
    const cut = text.length > MAX_TEXT;
    if (cut) text = text.slice(0, MAX_TEXT);
    const head = `${page.url} (HTTP ${page.status}${type ? `, ${type}` : ""})`;
    const notes = page.truncated || cut
      ? `\n[cut: only the first ${
        page.truncated ? `${WEB_FETCH_MAX_BYTES / 1024 / 1024} MB` : `${MAX_TEXT} characters`
      } were read]`
      : "";
    return ok(`${head}\n\n${text}${notes}`);
  }
}
