/**
 * The promise matrix's shared parts (tests/e2e/cli/promise_matrix_test.ts): the promises as tool
 * calls, the hooks and rules that guard them, a scripted model that plays a plan of cells, and an
 * OTLP/HTTP JSON receiver. Every cell has its own marker file and its own words, so one cell's
 * evidence never answers for another's.
 */
import { deftFlags } from "../../scripts/deft_flags.ts";
import { chatText, MockLLM, type MockReply, type MockRequest } from "./mock_llm.ts";
import { type DeftRun, denoDir, REPO_ROOT, trustedHomeWith } from "./deft.ts";
import { otlpReceiver as receiver } from "./otlp.ts";

/** The promises, in the matrix's row order. */
export const PROMISES = {
  a: "PreToolUse deny hook (exit 2)",
  b: "PreToolUse deny hook (JSON permissionDecision deny)",
  c: "PostToolUse hook (additionalContext)",
  d: "deny approval rule",
  e: "ask approval rule",
  f: "approval mode commands",
  g: "sandbox write confinement",
  h: "secret masking",
  i: "content-free spans",
} as const;

/** A promise's letter. */
export type Cell = keyof typeof PROMISES;

/** The step name of one cell: `promise × front end`. */
export function cellName(cell: Cell, frontEnd: string): string {
  return `${PROMISES[cell]} × ${frontEnd}`;
}

/** Words the hooks and rules react to, and the words they answer with. */
export const WORDS = {
  exit2: "MATRIX-DENY-EXIT2",
  exit2Reason: "matrix-exit2-reason: the exit-2 hook blocked this call",
  json: "MATRIX-DENY-JSON",
  jsonReason: "matrix-json-reason: the JSON hook denied this call",
  post: "MATRIX-POST",
  postContext: "matrix-post-context: the PostToolUse hook saw this call",
  denyRule: "$ touch d.made",
  askRule: "$ touch e.made",
  /** Allows what the ask rule asks about: only the ask rule (which beats it) makes it asked. */
  allowRule: "$ touch e.made",
  /** The secret-looking variable Deft is started with (the shell must never see its value). */
  secretVar: "DEFT_MATRIX_TOKEN",
};

// The hooks are command lines (run by `bash -c`), not script files: they read nothing but their
// input and write nothing, wherever they run (on the host or in the sandbox).
const PRE_HOOK = `input=$(cat)
case "$input" in
  *${WORDS.exit2}*) echo "${WORDS.exit2Reason}" >&2; exit 2 ;;
  *${WORDS.json}*)
    printf '%s\\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"${WORDS.jsonReason}"}}' ;;
esac
exit 0`;

const POST_HOOK = `input=$(cat)
case "$input" in
  *${WORDS.post}*)
    printf '%s\\n' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"${WORDS.postContext}"}}' ;;
esac
exit 0`;

/** One front end's world: a trusted HOME with the hooks and rules, its workspace and a folder
 * outside it, and the unique words of its secret and span cells. */
export interface Stage {
  frontEnd: string;
  home: string;
  /** The workspace on the host (for a container: the host folder nothing should reach). */
  ws: string;
  /** A folder outside the workspace: the confinement cell writes and edits here. */
  outside: string;
  /** The secret value in Deft's environment. */
  envSecret: string;
  /** A token-shaped secret in the workspace's `matrix.env`. */
  fileSecret: string;
  /** The span marker, in the command and its output. */
  spanMarker: string;
  /** HOME, XDG_STATE_HOME, the secret variable and the tracing variables for this front end. */
  env: Record<string, string>;
}

function unique(length: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join("");
}

/**
 * A stage for `frontEnd`: HOME trusted, its user config holding both hooks and the rules, the
 * workspace `HOME/ws` with `matrix.env` and `g-keep.txt` outside it; `collector` (an OTLP URL) turns
 * tracing on with content capture off.
 */
export async function makeStage(frontEnd: string, collector: string): Promise<Stage> {
  const home = await trustedHomeWith(
    `deft-matrix-${frontEnd.replace(/[^a-z0-9]+/gi, "-")}-`,
    () =>
      `hooks:
  PreToolUse:
    - matcher: bash
      hooks:
        - { type: command, command: ${JSON.stringify(PRE_HOOK)} }
  PostToolUse:
    - matcher: bash
      hooks:
        - { type: command, command: ${JSON.stringify(POST_HOOK)} }
approvals:
  deny: [${JSON.stringify(WORDS.denyRule)}]
  ask: [${JSON.stringify(WORDS.askRule)}]
  allow: [${JSON.stringify(WORDS.allowRule)}]
`,
  );
  const ws = `${home}/ws`;
  const outside = `${home}/outside`;
  await Deno.mkdir(ws);
  await Deno.mkdir(outside);
  const fileSecret = `sk-matrix${unique(28)}`;
  await Deno.writeTextFile(`${ws}/matrix.env`, `OPENAI_API_KEY=${fileSecret}\n`);
  await Deno.writeTextFile(`${outside}/g-keep.txt`, "kept\n");
  const envSecret = `matrixsecret${unique(20)}`;
  const spanMarker = `spanmark${unique(16)}`;
  return {
    frontEnd,
    home,
    ws,
    outside,
    envSecret,
    fileSecret,
    spanMarker,
    env: {
      HOME: home,
      XDG_STATE_HOME: `${home}/state`,
      [WORDS.secretVar]: envSecret,
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector,
      OTEL_SERVICE_NAME: serviceName(frontEnd),
      OTEL_DENO_CONSOLE: "ignore",
    },
  };
}

/** The OTLP service name a front end's spans carry. */
export function serviceName(frontEnd: string): string {
  return `deft-matrix-${frontEnd.replace(/[^a-z0-9]+/gi, "-")}`;
}

/** One tool call of a cell: its id (`mx-CELL-N`), the tool and its arguments. */
export interface PlannedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * The tool calls that exercise `cell` with `ws` as the workspace the tools see (a container's
 * own folder in a container session) and `stage.outside` as a folder outside it.
 */
export function callsOf(cell: Cell, stage: Stage, ws = stage.ws): PlannedCall[] {
  const bash = (n: number, command: string): PlannedCall => ({
    id: `mx-${cell}-${n}`,
    name: "bash",
    args: { command },
  });
  switch (cell) {
    case "a":
      return [bash(0, `touch a.made # ${WORDS.exit2}`)];
    case "b":
      return [bash(0, `touch b.made # ${WORDS.json}`)];
    case "c":
      return [bash(0, `touch c.made && echo c-ran # ${WORDS.post}`)];
    case "d":
      return [bash(0, "touch d.made")];
    case "e":
      return [bash(0, "touch e.made")];
    case "f":
      return [bash(0, "touch f.made")];
    case "g":
      return [
        bash(0, `echo escaped > ${stage.outside}/g.made`),
        {
          id: "mx-g-1",
          name: "str_replace_based_edit_tool",
          args: {
            command: "str_replace",
            path: `${stage.outside}/g-keep.txt`,
            old_str: "kept",
            new_str: "changed",
          },
        },
      ];
    case "h":
      return [bash(0, `echo "env:\${${WORDS.secretVar}:-unset}"; cat ${ws}/matrix.env`)];
    case "i":
      return [bash(0, `echo out-${stage.spanMarker}; ls /nonexistent-${stage.spanMarker}`)];
  }
}

/** The plan a prompt carries: `MATRIX-PLAN:a,b,…` (the model reads it back). */
export function planPrompt(cells: Cell[]): string {
  return `MATRIX-PLAN:${cells.join(",")}`;
}

// deno-lint-ignore no-explicit-any
type Message = { role: string; content?: any; tool_call_id?: string };

/**
 * A model that plays the plan of the latest prompt that names one: it makes the plan's calls one
 * at a time, in order (one per reply), then answers in words, quoting what the secret cell's call
 * printed (so a front end that shows the answer must mask it). `calls` gives a cell's calls.
 */
export function planModel(calls: (cell: Cell) => PlannedCall[]): MockLLM {
  return MockLLM.start([], (req: MockRequest): MockReply => {
    const messages: Message[] = req.body?.messages ?? [];
    let start = -1;
    let plan: Cell[] = [];
    messages.forEach((m, i) => {
      const found = m.role === "user" && /MATRIX-PLAN:([a-z,]+)/.exec(JSON.stringify(m.content));
      if (found) {
        start = i;
        plan = found[1].split(",").filter(Boolean) as Cell[];
      }
    });
    if (start < 0) return chatText("matrix: no plan in this prompt");
    const done = messages.slice(start).filter((m) => m.role === "tool").length;
    const planned = plan.flatMap(calls);
    if (done < planned.length) {
      const call = planned[done];
      return {
        body: {
          id: `chatcmpl-${call.id}`,
          object: "chat.completion",
          created: 0,
          model: "mock-model",
          choices: [{
            index: 0,
            message: {
              role: "assistant",
              content: "",
              tool_calls: [{
                id: call.id,
                type: "function",
                function: { name: call.name, arguments: JSON.stringify(call.args) },
              }],
            },
            finish_reason: "tool_calls",
          }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        },
      };
    }
    const secret = messages.slice(start).find((m) => m.tool_call_id === "mx-h-0");
    const quoted = secret ? ` The secret cell printed: ${text(secret.content)}` : "";
    return chatText(`matrix done.${quoted}`);
  });
}

function text(content: unknown): string {
  return typeof content === "string" ? content : JSON.stringify(content);
}

/** What the model read as the result of call `id`, in the last request that holds it ("" if none). */
export function resultSeen(mock: MockLLM, id: string): string {
  for (let i = mock.requests.length - 1; i >= 0; i--) {
    const messages: Message[] = mock.requests[i].body?.messages ?? [];
    const found = messages.find((m) => m.role === "tool" && m.tool_call_id === id);
    if (found) return text(found.content);
  }
  return "";
}

/** Every request the model got, as one text (for "never reached the model" checks). */
export function everythingSent(mock: MockLLM): string {
  return mock.requests.map((r) => JSON.stringify(r.body)).join("\n");
}

/** True when `path` exists (a link counts, even a broken one). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** One span the receiver got, with the service that sent it and the span as sent. */
export interface ReceivedSpan {
  service: string;
  name: string;
  // deno-lint-ignore no-explicit-any
  raw: any;
}

/** The shared OTLP receiver (tests/helpers/otlp.ts), its spans told apart by front end. */
export function otlpReceiver() {
  const r = receiver();
  const spans = (): ReceivedSpan[] =>
    r.spans().map((s) => ({ service: s.service, name: s.name, raw: s }));
  return {
    url: r.url,
    /** The spans one front end sent. */
    of: (frontEnd: string) => spans().filter((s) => s.service === serviceName(frontEnd)),
    close: r.close,
  };
}

/**
 * Runs `deft ARGS` as `runDeft` does (stdin empty), but killed after `ms`: a gate that breaks into
 * a question nobody can answer fails its cells instead of holding up the suite. A killed run's
 * code is the signal's (137).
 */
export async function runDeftBounded(
  args: string[],
  options: { cwd: string; env: Record<string, string>; ms?: number },
): Promise<DeftRun> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args],
    cwd: options.cwd,
    env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...options.env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await child.stdin.close();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* it ended just now */ }
  }, options.ms ?? 120_000);
  try {
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: out.signal === "SIGKILL"
        ? `${stderr}\n(killed after ${options.ms ?? 120_000} ms)`
        : stderr,
    };
  } finally {
    clearTimeout(timer);
  }
}
