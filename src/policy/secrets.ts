import { envObject } from "../env.ts";

/**
 * What counts as a secret, and how it is hidden. A variable whose name contains KEY, SECRET,
 * TOKEN, PASSWORD or CREDENTIAL holds one; so do the provider keys Deft was given, and any text
 * shaped like a well-known token (OpenAI/Anthropic `sk-…`, GitHub `ghp_…`, AWS `AKIA…`, Slack
 * `xox…`, Google `AIza…`, JWTs, PEM private keys). The shell never sees such variables (see
 * shell_env.ts) and every output (trajectories, stream-json events, the console, errors) masks
 * every such value, forwards and reversed, through the one `outputMasker`.
 */

/** Variable names that hold secrets (any case). */
// The OTLP exporter's headers carry a hosted collector's key (`x-honeycomb-team=…`).
export const SECRET_NAME =
  /KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|^OTEL_EXPORTER_OTLP_(\w+_)?HEADERS$/i;

/** Text that stands in for a masked secret. */
export const MASK = "***";

// Shorter values are too likely to be ordinary words or numbers ("1", "true") to mask.
const MIN_SECRET_LENGTH = 8;

const TOKEN_SHAPES: readonly RegExp[] = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];

/** True when a variable of this name holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * The secret values in `env` (variables with secret-looking names) plus `extra` (keys Deft was
 * given on the command line or in its config), longest first, without short or empty ones.
 */
export function secretValues(
  env: Record<string, string>,
  extra: readonly (string | undefined)[] = [],
): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (isSecretName(name) && value.length >= MIN_SECRET_LENGTH) values.add(value);
  }
  for (const value of extra) if (value && value.length >= MIN_SECRET_LENGTH) values.add(value);
  return [...values].sort((a, b) => b.length - a.length);
}

/** Hides secrets in text: the known values (also reversed) and well-known token shapes. */
export class SecretMasker {
  readonly #values: string[];

  /** `values`: the exact secrets to hide (see `secretValues`). */
  constructor(values: readonly string[]) {
    const all = new Set<string>();
    for (const value of values) {
      all.add(value);
      all.add([...value].reverse().join(""));
    }
    this.#values = [...all].sort((a, b) => b.length - a.length);
  }

  /**
   * `text` with every secret replaced by `***`.
   *
   * @example
   * ```ts
   * new SecretMasker(["hunter2-long"]).mask("pw=hunter2-long"); // "pw=***"
   * ```
   */
  mask(text: string): string {
    let out = text;
    for (const value of this.#values) if (out.includes(value)) out = out.replaceAll(value, MASK);
    for (const shape of TOKEN_SHAPES) out = out.replace(shape, MASK);
    return out;
  }

  /**
   * Where streamed `text` may be cut so that no secret is split: the text before the cut can be
   * masked and shown now, the rest must wait for more. Held back: a trailing run of token
   * characters (a token shape still being written), the start of a known secret, an unfinished
   * PEM key, and any secret the cut would split.
   */
  safeCut(text: string): number {
    let cut = /[A-Za-z0-9_.+\/=-]*$/.exec(text)!.index;
    const pem = text.lastIndexOf("-----BEGIN");
    if (pem >= 0 && !/-----END [A-Z0-9 ]*PRIVATE KEY-----/.test(text.slice(pem))) {
      cut = Math.min(cut, pem);
    }
    for (const value of this.#values) {
      for (let k = Math.min(value.length - 1, text.length); k > 0; k--) {
        if (text.endsWith(value.slice(0, k))) {
          cut = Math.min(cut, text.length - k);
          break;
        }
      }
    }
    // Repeated until stable: moving the cut back can make it split another secret.
    for (let moved = true; moved;) {
      moved = false;
      const spans: [number, number][] = [];
      for (const value of this.#values) {
        for (let i = text.indexOf(value); i >= 0; i = text.indexOf(value, i + 1)) {
          spans.push([i, i + value.length]);
        }
      }
      for (const shape of TOKEN_SHAPES) {
        for (const m of text.matchAll(shape)) spans.push([m.index, m.index + m[0].length]);
      }
      for (const [start, end] of spans) {
        if (start < cut && end > cut) {
          cut = start;
          moved = true;
        }
      }
    }
    return cut;
  }

  /**
   * A copy of a JSON-like value with every string masked, object keys included (a secret used as
   * a key, e.g. in an edit's JSON value or MCP arguments, is hidden like any other). Two keys that
   * mask to the same text are kept apart with a `#n` suffix.
   */
  maskDeep<T>(value: T): T {
    return this.#deep(value) as T;
  }

  #deep(value: unknown): unknown {
    if (typeof value === "string") return this.mask(value);
    if (Array.isArray(value)) return value.map((v) => this.#deep(v));
    if (value === null || typeof value !== "object") return value;
    if (typeof (value as { toJSON?: unknown }).toJSON === "function") return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      let name = this.mask(key);
      for (let n = 2; name !== key && Object.hasOwn(out, name); n++) {
        name = `${this.mask(key)}#${n}`;
      }
      out[name] = this.#deep(v);
    }
    return out;
  }
}

const given = new Set<string>();
let shared: SecretMasker | undefined;

/**
 * Adds keys Deft was given (from the command line or a config file) to what every output hides.
 * Whoever loads such a key calls this before anything derived from the run is printed.
 */
export function addOutputSecrets(values: readonly (string | undefined)[]): void {
  for (const value of values) {
    if (value && value.length >= MIN_SECRET_LENGTH && !given.has(value)) {
      given.add(value);
      shared = undefined;
    }
  }
}

/**
 * The masker every output uses (trajectories, stream-json, the console, error messages): the
 * secret-looking variables of Deft's environment, the keys added with `addOutputSecrets`, and the
 * well-known token shapes. One set of secrets, so no output hides less than another.
 */
export function outputMasker(): SecretMasker {
  shared ??= new SecretMasker(secretValues(envObject(), [...given]));
  return shared;
}

/**
 * Masks text that arrives in pieces (the model's streamed answer): `push` returns what can be
 * shown now, masked, holding back whatever might be the start of a secret; `flush` returns the
 * rest. A key split across two pieces is masked whole.
 */
export class StreamMasker {
  #pending = "";

  /** The masked text that is safe to show after `delta`. */
  push(delta: string): string {
    this.#pending += delta;
    const masker = outputMasker();
    const cut = masker.safeCut(this.#pending);
    const ready = this.#pending.slice(0, cut);
    this.#pending = this.#pending.slice(cut);
    return ready ? masker.mask(ready) : "";
  }

  /** Everything held back, masked. */
  flush(): string {
    const rest = this.#pending;
    this.#pending = "";
    return rest ? maskOutput(rest) : "";
  }
}

/** `text` masked by the shared output masker. */
export function maskOutput(text: string): string {
  return outputMasker().mask(text);
}

/** How `deft config` shows a secret: `****` and at most its last 4 characters. */
export function maskForDisplay(secret: string | undefined): string {
  if (!secret) return "(not set)";
  if (secret.length < 12) return "****";
  return `****${secret.slice(-4)}`;
}
