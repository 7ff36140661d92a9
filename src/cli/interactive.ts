/**
 * `deft interactive`: a conversation at a prompt. Each prompt is a turn of one conversation (the
 * model sees the earlier turns until /clear); a turn ends when the model answers without a tool
 * call or calls task_done. The tools (the bash session, edit history) persist for the session.
 * Turns are shown by `deft run`'s console (live on a terminal); the line typed during a turn is
 * drawn under its output (console/screen.ts) and edited there, lines entered are queued and sent
 * after it. Ctrl-C stops the running turn, not the session; /exit, `exit` or
 * Ctrl-D on an empty line leaves. A first prompt (`deft "task"`) is sent at once; `--resume`
 * without an id picks the session to go on with. `/compact` and `/init` run as turns do: timed
 * on their own, type-ahead queued, Ctrl-C stopping them. The composer (bracketed paste folded
 * into one prompt, Alt-Enter for a newline, `@file` attachments and images, `!command`, Esc,
 * Ctrl-R) is line_reader.ts, mentions.ts and shell_line.ts.
 *
 * The prompt is drawn before the session is assembled: the configuration is read and checked
 * first (interactive/preflight.ts: every mistake in it still stops the start before the
 * prompt), then the agent, the tools, the model client and the MCP servers are loaded and
 * started behind the prompt (interactive/chat.ts) while the user types. The first line sent
 * waits for them ("starting…" when that takes a while); /help answers at once; an error of the
 * assembly ends the session as it would have ended it before the prompt.
 */
import type { InteractiveOptions } from "./interactive/options.ts";
import { UsageError, writeStderr } from "./io.ts";
import { LineReader } from "./interactive/line_reader.ts";
import { deftStateDir } from "../policy/dirs.ts";
import {
  banner,
  idleInterrupt,
  say,
  shown,
  startTrace,
  traceStart,
} from "./interactive/prompt_io.ts";
import { assemblesBehindPrompt, preflight } from "./interactive/preflight.ts";

export type { InteractiveOptions };

// The session (the agent, the tools, the model client) and what only a session uses.
const chat = () => import("./interactive/chat.ts");
const mentions = () => import("./interactive/mentions.ts");
const helpText = () => import("./interactive/help_text.ts");

/** A first line sent waits this long for the session in silence, then says "starting…". */
const STARTING_NOTE_MS = 300;

/** Runs the session; returns the exit code. */
export async function interactiveCommand(opts: InteractiveOptions): Promise<number> {
  const terminal = Deno.stdin.isTerminal();
  checkOptions(opts, terminal);
  // `--image`: checked now, sent with the first prompt.
  const given = opts.image ?? [];
  const images =
    await (given.length === 0
      ? Promise.resolve([])
      : mentions().then((m) => Promise.all(given.map(m.readImageFile)))).catch((e) => {
        throw new UsageError((e as Error).message);
      });
  const reader = await LineReader.open(terminal, `${deftStateDir()}/history`);
  if (!assemblesBehindPrompt(opts)) {
    const { Chat } = await chat();
    const opened = await Chat.open(opts, reader, terminal);
    opened.launchImages = images;
    return await opened.run();
  }
  let checked;
  try {
    checked = await preflight(opts, {
      terminal,
      ask: (question) => reader.ask(question),
      write: say,
    });
  } catch (e) {
    reader.close();
    throw e;
  }
  if (startTrace.length > 0) startTrace.push(`checked ${performance.now().toFixed(0)}`);
  say(banner({ ...checked }));
  const assembly = chat().then(async ({ Chat }) => {
    const opened = await Chat.open(opts, reader, terminal, checked);
    opened.launchImages = images;
    return opened;
  });
  traceStart();
  return await beforeAssembled(opts, reader, terminal, assembly);
}

type Assembled = import("./interactive/chat.ts").Chat;

/** What the assembly behind the prompt came to. */
type Outcome = { chat: Assembled } | { error: unknown };

/**
 * The prompt while the session is assembled behind it: /help is answered at once and Ctrl-C says
 * how to leave; any other input (a prompt, a command, `exit`, Ctrl-D) is the session's, handed
 * to it once it is ready, as is a read still pending then. An assembly error closes the prompt
 * and is thrown, to end the command as it would have before the prompt was drawn.
 */
async function beforeAssembled(
  opts: InteractiveOptions,
  reader: LineReader,
  terminal: boolean,
  assembly: Promise<Assembled>,
): Promise<number> {
  const interrupt = () => idleInterrupt(reader, terminal);
  reader.onInterrupt = interrupt;
  Deno.addSignalListener("SIGINT", interrupt);
  let listening = true;
  const outcome: Promise<Outcome> = assembly.then((chat) => ({ chat }), (error) => ({ error }));
  try {
    let first: Promise<string | null>;
    let done: Outcome | undefined;
    if (opts.prompt !== undefined) {
      if (terminal) writeStderr(`deft> ${shown(opts.prompt)}`);
      first = Promise.resolve(opts.prompt);
    } else {
      for (;;) {
        const reading = reader.read("deft> ");
        const next = await Promise.race([reading.then((line) => ({ line })), outcome]);
        if (!("line" in next)) {
          // Ready (or failed) while the user types: the pending read is the session's.
          done = next;
          first = reading;
          break;
        }
        if (next.line !== null && /^\/help$/i.test(next.line.trim())) {
          say((await helpText()).helpText());
          continue;
        }
        first = Promise.resolve(next.line);
        break;
      }
    }
    done ??= await waitSaying(outcome, reader, await first !== null);
    if ("error" in done) {
      reader.cancelPending();
      reader.close();
      if (terminal) writeStderr("");
      throw done.error;
    }
    Deno.removeSignalListener("SIGINT", interrupt);
    listening = false;
    return await done.chat.run({ first });
  } finally {
    if (listening) Deno.removeSignalListener("SIGINT", interrupt);
  }
}

/**
 * The assembly's outcome; a line `sent` before it is ready says "starting…" if it takes a while.
 */
async function waitSaying(
  outcome: Promise<Outcome>,
  reader: LineReader,
  sent: boolean,
): Promise<Outcome> {
  let ready = false;
  // Ctrl-D (end of input) waits for it in silence: the session only closes.
  const timer = sent
    ? setTimeout(() => {
      if (!ready) say("starting…");
    }, STARTING_NOTE_MS)
    : undefined;
  reader.busy = true;
  try {
    return await outcome;
  } finally {
    ready = true;
    clearTimeout(timer);
    reader.busy = false;
  }
}

/** Options that cannot go together, or a first prompt of blanks: usage errors before anything. */
function checkOptions(opts: InteractiveOptions, terminal: boolean): void {
  if (opts.continue && opts.resume !== undefined) {
    throw new UsageError("give either --continue or --resume, not both.");
  }
  if (opts.resume === true && !terminal) {
    throw new UsageError(
      "--resume without an id picks a session on the terminal, and standard input is not " +
        "one: give the id (deft sessions lists them), or use --continue for the latest.",
    );
  }
  if (opts.prompt !== undefined && opts.prompt.trim() === "") {
    throw new UsageError(
      'the first prompt is empty: give a task in words, e.g. deft "fix the bug".',
    );
  }
}
