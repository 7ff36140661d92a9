/**
 * The conversation of `deft interactive` once its session is assembled: the turns, the slash
 * commands, `!command` lines and the composer's keys (src/cli/interactive.ts draws the prompt
 * first and loads this module, with the agent, the tools and the model client, behind it).
 */
import { openSession, runTask, type Session } from "../../agent/session.ts";
import type { LoadedConfig } from "../../config/load.ts";
import type { LLMImage } from "../../llm/types.ts";
import type { TrajectoryRecorder } from "../../trajectory/recorder.ts";
import { writeStderr, writeStdout } from "../io.ts";
import type { CommandContext } from "./commands.ts";
import type { LineReader } from "./line_reader.ts";
import { resumeTarget, sessionPlace } from "../resume.ts";
import type { SessionPlace } from "../../trajectory/conversation.ts";
import { chooseConsole } from "../console/choose.ts";
import { holdScreen, Spinner } from "../console/spinner.ts";
import { screen, screenWrite } from "../console/screen.ts";
import { TurnConsole } from "./turn_console.ts";
import type { TurnCommandContext } from "./turn_commands.ts";
import { closeOnSignals, closeWorkplace, sessionWorkspace } from "../session_place.ts";
import { endSessionHooks, type SessionEnding } from "../../agent/hook_gate.ts";
import { onStopSignals } from "../signals.ts";
import { BUDGET_EXIT_CODE } from "../../agent/budget.ts";
import { runShellLine, shellLine } from "./shell_line.ts";
import type { InteractiveOptions } from "./options.ts";
import { banner, idleInterrupt, say, shown, startTrace, traceStart } from "./prompt_io.ts";

// What the prompt does not need is loaded when first used (and fetched once the prompt is
// drawn): the slash commands, the `@` mentions, the session picker.
const commands = () => import("./commands.ts");
const mentions = () => import("./mentions.ts");
const pickSession = async (...args: Parameters<PickSession>) =>
  await (await import("./picker.ts")).pickSession(...args);
type PickSession = typeof import("./picker.ts").pickSession;

/** A second Esc within this many milliseconds of the first opens /rewind. */
const REWIND_ESC_MS = 1500;

/** How the conversation asks the user: on the composer, the question owning the screen. */
function composerAsking(reader: LineReader, terminal: boolean) {
  return {
    defaultMode: "commands" as const,
    // The question owns the screen: the spinner stops until it is answered.
    ask: Object.assign((question: string) => reader.ask(question), {
      // The spinner and the composer line under the output both leave the screen.
      hold: () => {
        const composer = screen.hold();
        const spinner = holdScreen();
        return () => {
          spinner();
          composer();
        };
      },
      tell: say,
    }),
    terminal,
    switchable: true,
  };
}

type Resumed = Awaited<ReturnType<typeof resumeTarget>>;

/**
 * What the prompt found before the session was assembled behind it (src/cli/interactive.ts): the
 * configuration it loaded and checked (trust asked) and the workspace it resolved.
 */
export interface Started {
  loaded: LoadedConfig;
  workspace: string;
}

/** One conversation at the prompt: its session, the running turn, and the composer's keys. */
export class Chat {
  /** The running turn (or slash command's model work), which Ctrl-C stops. */
  #current?: AbortController;
  /** The spinner of a slash command's model call (/compact), which shows no progress itself. */
  #waiting?: Spinner;
  #conversations = 0;
  /** `!` alone: every line is a shell command until Esc or another `!`. */
  #shellMode = false;
  /** A budget cap ended a turn: the session ends, with the budget's exit code. */
  #overBudget = false;
  /** What `!command`s printed since the last prompt: the user's own context for the next one. */
  readonly #shellContext: string[] = [];
  #link?: NonNullable<Resumed>["link"];
  /** Images given with `--image`, sent with the first prompt. */
  launchImages: LLMImage[] = [];
  readonly #state: CommandContext & TurnCommandContext;

  private constructor(
    readonly opts: InteractiveOptions,
    readonly reader: LineReader,
    readonly terminal: boolean,
    readonly session: Session,
    readonly console: TurnConsole,
    readonly resumed: Resumed,
  ) {
    this.#link = resumed?.link;
    this.#state = this.#commandContext();
  }

  /** Opens the session, and finds the session to go on with (`--continue`, `--resume`). */
  static async open(
    opts: InteractiveOptions,
    reader: LineReader,
    terminal: boolean,
    started?: Started,
  ) {
    // The session to go on with, among the open place's (a container's workspace and image
    // say which sessions are its), found before anything runs there.
    const findResumed = async (place: SessionPlace) => {
      let pick = typeof opts.resume === "string" ? opts.resume : undefined;
      if (opts.resume === true) {
        pick = await pickSession(place, reader, say);
        if (pick === undefined) say("starting a new session.");
      }
      return await resumeTarget({
        continue: opts.continue,
        resume: pick,
        workingDir: opts.workingDir,
      }, place);
    };
    let resumed: Resumed;
    let session;
    let console: TurnConsole;
    try {
      const workspace = started?.workspace ?? await sessionWorkspace(opts);
      // The console of `deft run`: live on a terminal, plain lines otherwise.
      console = new TurnConsole(chooseConsole({ color: opts.color, workspace }));
      // Assembled behind a drawn prompt, what the session says goes above it.
      const aside = started ? (text: string) => reader.tellAbove(shown(text)) : undefined;
      console.aside = aside;
      session = await openSession(
        opts,
        {
          workspace,
          console,
          asking: composerAsking(reader, terminal),
          write: (text) => (console.aside ?? say)(text),
          // The baseline is recorded after the prompt is drawn (`Chat.#beginStart`).
          startLater: { tell: (text) => reader.tellAbove(shown(text)) },
          opened: async (workplace) => {
            resumed = await findResumed(workplace.place);
            const note = resumed && workplace.resumeNote(resumed.trajectory);
            if (note) say(note);
          },
        },
        undefined,
        started?.loaded,
      );
      console.aside = undefined;
    } catch (e) {
      reader.close();
      throw e;
    }
    if (startTrace.length > 0) startTrace.push(`session ${performance.now().toFixed(0)}`);
    return new Chat(opts, reader, terminal, session, console, resumed);
  }

  /** What the slash commands work with. */
  #commandContext(): CommandContext & TurnCommandContext {
    const { reader, session } = this;
    const state: CommandContext & TurnCommandContext = {
      session,
      conversation: this.resumed?.conversation ?? [],
      recorder: undefined,
      resumed: this.resumed,
      turns: 0,
      tokens: 0,
      reset: (from) => {
        state.conversation = from?.conversation ?? [];
        state.recorder = undefined;
        state.resumed = from?.resumed;
        this.#link = from?.link;
      },
      write: say,
      pick: () => pickSession(sessionPlace(session), reader, say),
      // Piped input answers no question: /rewind then takes its turn as an argument.
      choose: this.terminal ? (question, options) => reader.choose(question, options) : undefined,
      select: this.terminal ? (question, rows) => reader.select(question, rows) : undefined,
      // A slash command's model work (/compact, /init) runs as a turn does.
      asTurn: async (work, label) => {
        const current = this.#current = new AbortController();
        // A helper's trajectory is new: its closing line counts from zero, timed from now.
        this.console.beginTurn(undefined);
        reader.busy = true;
        if (label && Deno.stderr.isTerminal()) {
          this.#waiting = new Spinner(writeBytes);
          this.#waiting.start(label);
        }
        try {
          return await work(current.signal);
        } catch (e) {
          if (current.signal.aborted) return undefined;
          throw e;
        } finally {
          this.#waiting?.stop();
          this.#waiting = undefined;
          reader.busy = false;
          this.#current = undefined;
        }
      },
    };
    return state;
  }

  /** Ctrl-C (or Esc during a turn): stops the running turn, not the session. */
  readonly #interrupt = () => {
    const { reader } = this;
    const current = this.#current;
    if (!current) return idleInterrupt(reader, this.terminal);
    const dropped = reader.dropQueued();
    this.#waiting?.stop();
    this.session.console.note(
      "interrupted: stopping the turn" +
        (dropped > 0 ? ` (${dropped} queued prompt(s) dropped)` : ""),
    );
    current.abort(new Error("interrupted"));
    reader.cancelPending();
    // Killing the shell ends a running command now; the next command gets a fresh shell.
    void this.session.executor.stopShells();
  };

  /** The composer's keys: Ctrl-C, Tab on an `@` mention, Esc, and a line typed during a turn. */
  #installKeys(): void {
    const { reader, session } = this;
    reader.onInterrupt = this.#interrupt;
    // Tab completes an `@` mention over the workspace's files (listed once per few seconds).
    let listed: { at: number; files: Promise<string[]> } | undefined;
    reader.completer = async (line) => {
      if (!/(?:^|\s)@[^\s@]*$/.test(line)) return [[], line];
      if (!listed || performance.now() - listed.at > 5000) {
        listed = {
          at: performance.now(),
          files: session.workplace.listFiles(),
        };
      }
      return (await mentions()).completeMention(line, await listed.files);
    };
    // Esc twice on an empty composer (between turns) opens the /rewind picker.
    let escapedAt = -Infinity;
    reader.onEscape = (double) => {
      if (this.#current) this.#interrupt();
      else if (this.#shellMode) {
        this.#shellMode = false;
        writeStderr("\n(shell mode off)");
        reader.clearLine("deft> ");
      } else if (reader.line === "") {
        const now = performance.now();
        if ((double || now - escapedAt < REWIND_ESC_MS) && reader.submit("/rewind")) {
          escapedAt = -Infinity;
          return;
        }
        escapedAt = now;
        writeStderr("\n(Esc again to rewind to a checkpoint)");
        reader.clearLine();
      }
    };
    reader.onQueued = (line) => {
      this.#waiting?.clear();
      session.console.note(`queued: ${line.trim() || "(empty line)"} (sent when this turn ends)`);
    };
  }

  /**
   * Begins the session's start work (the baseline, ./../agent/session_start.ts) once the prompt is
   * drawn, a timer tick later so its bytes go out first. The first turn and every tool call wait
   * for it; its error is told above the prompt, and again by what it stops.
   */
  #beginStart(): void {
    const start = this.session.start;
    if (!start || start.begun || this.#startTimer !== undefined) return;
    this.#startTimer = setTimeout(() => {
      commands().then(mentions).catch(() => {}); // a failure is met again where they are used
      start.run().catch((e) => {
        this.reader.tellAbove(
          shown(
            `error: the session could not record its start (${errorText(e)}); no tool ` +
              `can run in this session: /exit and start again once that is fixed.`,
          ),
        );
      });
    }, 0);
  }
  #startTimer?: ReturnType<typeof setTimeout>;

  /**
   * Reads and answers lines until the user leaves; returns the exit code. `handed` is given by a
   * prompt drawn before the session was assembled (src/cli/interactive.ts): the line above it is
   * written, and its first input (a read pending, the line read, the first prompt) is this
   * loop's first.
   */
  async run(handed?: { first: Promise<string | null> }): Promise<number> {
    const { session, reader, terminal, opts, resumed } = this;
    const keepSignals = closeOnSignals(session);
    // Elsewhere SIGTERM and SIGHUP end the session as they would have, with the terminal's
    // bracketed paste turned off first (a workplace closed on signals exits through Deno.exit,
    // whose unload turns it off). Without a terminal they are handled only for the session's
    // SessionEnd hooks.
    const keepPasteSignals = session.workplace.closesOnSignals ||
        (!terminal && !session.hooks?.has("SessionEnd"))
      ? () => {}
      : onStopSignals((name, code) => {
        // SessionEnd hooks still run, each bounded (SESSION_END_SIGNAL_BOUND_S); the prompt
        // stays open meanwhile, so the session does not also end as if its input had closed.
        void endSessionHooks(session.hooks, {
          reason: "other",
          deft: `signal ${name}`,
          signal: true,
        }, session).finally(() => {
          reader.close();
          Deno.exit(code);
        });
      }, ["SIGTERM", "SIGHUP"]);
    this.#installKeys();
    Deno.addSignalListener("SIGINT", this.#interrupt);
    const { config } = session;
    let first = handed?.first;
    if (!handed) {
      say(banner({
        provider: config.model.provider.provider,
        model: config.model.settings.model,
        workspace: session.workspace,
        approval: session.approval?.mode ?? "never",
      }, resumed && { id: resumed.link.session_id, path: resumed.path }));
      traceStart();
      if (opts.prompt !== undefined) {
        if (terminal) writeStderr(`deft> ${shown(opts.prompt)}`);
        first = Promise.resolve(opts.prompt);
      }
    }
    // How the session ended, for its SessionEnd hooks: the user left at the prompt, or not.
    let ending: SessionEnding = { reason: "other", deft: "error" };
    try {
      for (;;) {
        const reading = first ?? reader.read(this.#shellMode ? "deft !> " : "deft> ");
        first = undefined;
        this.#beginStart();
        const line = await reading;
        if (line === null) {
          ending = { reason: "prompt_input_exit", deft: "input_closed" };
          break;
        }
        if (await this.#answer(line) === "exit") {
          ending = { reason: "prompt_input_exit", deft: "exit" };
          break;
        }
        if (this.#overBudget) {
          ending = { reason: "other", deft: "budget" };
          break;
        }
      }
    } finally {
      Deno.removeSignalListener("SIGINT", this.#interrupt);
      reader.close();
      for (const e of await session.executor.closeTools()) {
        session.console.note(`warning: ${e.message}`);
      }
      // Start work never begun stays so; begun, it ends before the workplace closes.
      clearTimeout(this.#startTimer);
      await session.start?.settled();
      keepSignals();
      keepPasteSignals();
      await endSessionHooks(session.hooks, ending, session);
      await closeWorkplace(session);
    }
    writeStderr("bye");
    return this.#overBudget ? BUDGET_EXIT_CODE : 0;
  }

  /** One line typed at the prompt: a shell command, a slash command, `exit`, or a prompt. */
  async #answer(line: string): Promise<"exit" | void> {
    const input = line.trim();
    if (input === "") return;
    const shell = shellLine(input, this.#shellMode);
    if (shell && "toggle" in shell) {
      this.#shellMode = !this.#shellMode;
      say(
        this.#shellMode
          ? "shell mode: each line runs in the session's shell (Esc or ! alone to leave)."
          : "shell mode off.",
      );
      return;
    }
    if (shell) {
      if (shell.command !== "") await this.#shellCommand(shell.command);
      return;
    }
    if (/^(exit|quit)$/i.test(input)) return "exit";
    const { isCommandName, isSlashCommand, runSlashCommand } = await commands();
    if (isSlashCommand(input)) {
      if (await runSlashCommand(input, this.#state) === "exit") return "exit";
      return;
    }
    // A command's name alone is most likely the command with its slash forgotten.
    if (isCommandName(input)) {
      say(
        `did you mean /${input.toLowerCase()}? Nothing was sent to the model; to ask the ` +
          `model, write more than the one word.`,
      );
      return;
    }
    await this.#turn(line);
  }

  /** A `!command`: run in the session's shell, its output kept for the next prompt. */
  async #shellCommand(command: string): Promise<void> {
    const current = this.#current = new AbortController();
    this.reader.busy = true;
    try {
      const outcome = await runShellLine(this.session.executor, command);
      say(outcome.shown);
      this.#state.recorder?.recordEvent({
        kind: "shell",
        command: outcome.command,
        output: outcome.shown,
      });
      if (outcome.context && !current.signal.aborted) this.#shellContext.push(outcome.context);
    } catch (e) {
      say(`the command failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.reader.busy = false;
      this.#current = undefined;
    }
  }

  /** A prompt: one turn of the conversation, with the user's context and attachments. */
  async #turn(line: string): Promise<void> {
    const { session, reader, opts, console } = this;
    const state = this.#state;
    const current = this.#current = new AbortController();
    const before = usedTokens(state.recorder);
    console.beginTurn(state.recorder?.data.total_usage);
    reader.busy = true;
    try {
      if (!state.recorder) this.#conversations++;
      // What the user's `!command`s printed goes with the prompt, marked as theirs; then the
      // files the prompt mentions, attached.
      let task = this.#shellContext.length > 0
        ? `${this.#shellContext.join("\n\n")}\n\n${line}`
        : line;
      const { imageRefusal, mentionsIn, readMention, withAttachments } = await mentions();
      // Each judged and read where the tools act (inside a container, in there).
      const mentioned = await Promise.all(
        mentionsIn(line).map((path) => readMention(session.workplace, path)),
      );
      for (const m of mentioned) {
        say(
          "text" in m
            ? `attached @${m.path} (${m.lines} line(s), ${m.bytes} bytes)`
            : "image" in m
            ? `attached image @${m.path} (${m.image.mediaType}, ${m.bytes} bytes)`
            : `not attached: @${m.path}: ${m.refused}`,
        );
      }
      task = withAttachments(task, mentioned);
      const images = [
        ...this.launchImages,
        ...mentioned.flatMap((m) => "image" in m ? [m.image] : []),
      ];
      this.launchImages = [];
      if (images.length > 0) {
        const refusal = imageRefusal(session.config.model.provider.provider);
        if (refusal) {
          say(`the prompt was not sent: ${refusal}.`);
          return;
        }
      }
      this.#shellContext.length = 0;
      const { result, recorder } = await runTask(session, task, {
        signal: current.signal,
        conversation: state.conversation,
        recorder: state.recorder,
        images,
        resumedFrom: this.#link,
        // The checkpoint (the /rewind picker) and the record name the turn by what was typed,
        // not by the shell output and files sent with it.
        recordedTask: line,
        textEndsTurn: true,
        trajectoryFile: opts.trajectoryFile
          ? opts.trajectoryFile.replace(/(\.json)?$/, `.${this.#conversations}.json`)
          : undefined,
      });
      state.recorder = recorder;
      state.tokens += usedTokens(recorder) - before;
      // The answer goes to stdout, unless the live console already showed it there as it
      // streamed in; why a turn stopped short is progress, on stderr.
      if (result.success && result.finalResult) {
        if (!(Deno.stdout.isTerminal() && console.showed(result.finalResult))) {
          // Off the composer line's row first: stdout may be the same terminal.
          const release = screen.hold();
          await writeStdout(`${shown(result.finalResult.trimEnd())}\n`).finally(release);
        }
      } else if (!result.interrupted && result.finalResult) say(result.finalResult);
      if (result.budgetStop) this.#overBudget = true;
    } catch (e) {
      session.console.note(`turn failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      reader.busy = false;
      this.#current = undefined;
      state.turns++;
    }
  }
}

function writeBytes(bytes: Uint8Array): void {
  screenWrite(bytes);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function usedTokens(recorder: TrajectoryRecorder | undefined): number {
  const usage = recorder?.data.total_usage;
  return usage ? usage.input_tokens + usage.output_tokens : 0;
}
