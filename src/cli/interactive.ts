/**
 * `deft interactive`: a conversation at a prompt. Each prompt is a turn of one conversation (the
 * model sees the earlier turns until /clear); a turn ends when the model answers without a tool
 * call or calls task_done. The tools (the bash session, edit history) persist for the session.
 * Ctrl-C stops the running turn, not the session; /exit, `exit` or Ctrl-D on an empty line leaves.
 */
import { StderrConsole, type TaskSummary } from "../agent/console.ts";
import { openSession, runTask, type SessionOptions } from "../agent/session.ts";
import { stateDir, type TrajectoryRecorder } from "../trajectory/recorder.ts";
import { writeStderr, writeStdout } from "./io.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";

// What interactive prints itself (the model id, /diff, the answer) is model or repository text:
// masked like the trajectory, and inert on the terminal.
const shown = (text: string) => terminalText(maskOutput(text));
const say = (text: string) => writeStderr(shown(text));
import { type CommandContext, isSlashCommand, runSlashCommand } from "./interactive/commands.ts";
import { LineReader } from "./interactive/line_reader.ts";
import { type ResumeOptions, resumeTarget } from "./resume.ts";
import { chooseConsole } from "./console/choose.ts";
import type { ColorMode } from "./console/style.ts";
import { closeContainer, closeContainerOnSignals, sessionWorkspace } from "./container_session.ts";

/** Options of `deft interactive`. */
export interface InteractiveOptions extends SessionOptions, Pick<ResumeOptions, "continue"> {
  workingDir?: string;
  trajectoryFile?: string;
  color?: ColorMode;
}

/** The progress console, minus the summary's copy of the answer (the answer is printed whole). */
class TurnConsole extends StderrConsole {
  override summary(info: TaskSummary): void {
    super.summary({ ...info, result: null });
  }
}

/** Runs the session; returns the exit code. */
export async function interactiveCommand(opts: InteractiveOptions): Promise<number> {
  const terminal = Deno.stdin.isTerminal();
  const resumed = await resumeTarget({ continue: opts.continue, workingDir: opts.workingDir });
  const reader = await LineReader.open(terminal, `${stateDir()}/history`);
  let session;
  try {
    const workspace = await sessionWorkspace(opts);
    session = await openSession(opts, {
      workspace,
      // Until the first turn: notes while the session starts (MCP servers, instructions, retries).
      console: chooseConsole({ color: opts.color, workspace }),
      asking: {
        defaultMode: "commands",
        ask: (question) => reader.ask(question),
        terminal,
        switchable: true,
      },
      write: say,
    });
  } catch (e) {
    reader.close();
    throw e;
  }
  session.console = new TurnConsole();
  const keepSignals = closeContainerOnSignals(session);
  const { executor, config } = session;
  let current: AbortController | undefined;
  let conversations = 0;
  const state: CommandContext = {
    session,
    conversation: resumed?.conversation ?? [],
    recorder: undefined,
    turns: 0,
    tokens: 0,
    reset: (from) => {
      state.conversation = from?.conversation ?? [];
      state.recorder = undefined;
      link = from?.link;
    },
    write: say,
  };
  let link = resumed?.link;

  const interrupt = () => {
    if (!current) {
      if (terminal) {
        writeStderr("\n(Ctrl-D on an empty line or /exit leaves)");
        reader.clearLine();
      } else writeStderr("\n(type /exit to leave)");
      return;
    }
    session.console.note("interrupted: stopping the turn");
    current.abort(new Error("interrupted"));
    reader.cancelPending();
    // Killing the shell ends a running command now; the next command gets a fresh shell.
    void executor.find("bash")?.close();
  };
  reader.onInterrupt = interrupt;
  Deno.addSignalListener("SIGINT", interrupt);
  say(
    `deft interactive: ${config.model.provider.provider}/${config.model.settings.model} in ` +
      `${session.workspace}, approval: ${session.approval?.mode ?? "never"}. ` +
      `Type /help for commands.` +
      (resumed ? `\nresumed session ${resumed.link.session_id} (${resumed.path})` : ""),
  );
  try {
    for (;;) {
      const line = await reader.read("deft> ");
      if (line === null) break;
      const input = line.trim();
      if (input === "") continue;
      if (/^(exit|quit)$/i.test(input)) break;
      if (isSlashCommand(input)) {
        if (await runSlashCommand(input, state) === "exit") break;
        continue;
      }
      current = new AbortController();
      const before = usedTokens(state.recorder);
      try {
        if (!state.recorder) conversations++;
        const { result, recorder } = await runTask(session, line, {
          signal: current.signal,
          conversation: state.conversation,
          recorder: state.recorder,
          resumedFrom: link,
          textEndsTurn: true,
          trajectoryFile: opts.trajectoryFile
            ? opts.trajectoryFile.replace(/(\.json)?$/, `.${conversations}.json`)
            : undefined,
        });
        state.recorder = recorder;
        state.tokens += usedTokens(recorder) - before;
        // The answer goes to stdout; why a turn stopped short is progress, on stderr.
        if (result.success && result.finalResult) {
          await writeStdout(`${shown(result.finalResult)}\n`);
        } else if (!result.interrupted && result.finalResult) say(result.finalResult);
      } catch (e) {
        session.console.note(`turn failed: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        current = undefined;
        state.turns++;
      }
    }
  } finally {
    Deno.removeSignalListener("SIGINT", interrupt);
    reader.close();
    for (const e of await executor.closeTools()) session.console.note(`warning: ${e.message}`);
    keepSignals();
    await closeContainer(session);
  }
  writeStderr("bye");
  return 0;
}

function usedTokens(recorder: TrajectoryRecorder | undefined): number {
  const usage = recorder?.data.total_usage;
  return usage ? usage.input_tokens + usage.output_tokens : 0;
}
