/**
 * `deft interactive`: tasks typed at a prompt. Each task starts a fresh conversation while the
 * tools (the bash session, edit history) persist for the whole session. Ctrl-C interrupts the
 * running task, not the session; `exit`, `quit` or end of input leaves.
 */
import { stdinLines, writeStderr } from "./io.ts";
import { openSession, runTask, type SessionOptions } from "./session.ts";

/** Options of `deft interactive`. */
export interface InteractiveOptions extends SessionOptions {
  trajectoryFile?: string;
}

const HELP = `Type a task and press Enter; the agent works on it until it calls task_done.
Each task starts a fresh conversation; the shell session and edit history carry over.
Commands:
  help     this text
  status   provider, model, workspace, tools and what the session has used
  clear    clear the screen
  exit     leave (also: quit, Ctrl-D)
Ctrl-C stops the running task and returns to the prompt.`;

/** Runs the session; returns the exit code. */
export async function interactiveCommand(opts: InteractiveOptions): Promise<number> {
  const session = await openSession(opts);
  const { console, executor, config } = session;
  const terminal = Deno.stdin.isTerminal();
  const prompt = () => terminal && writeStderr("deft> ");
  let current: AbortController | undefined;
  let tasks = 0;
  let tokens = 0;
  const onInterrupt = () => {
    if (!current) {
      writeStderr("\n(type exit to leave)");
      prompt();
      return;
    }
    console.note("interrupted: stopping the task");
    current.abort(new Error("interrupted"));
    // Killing the shell ends a running command now; the next command gets a fresh shell.
    void executor.find("bash")?.close();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  writeStderr(
    `deft interactive: ${config.model.provider.provider}/${config.model.settings.model} in ` +
      `${session.workspace}. Type help for commands.`,
  );
  try {
    prompt();
    for await (const line of stdinLines()) {
      const input = line.trim();
      if (input === "") {
        prompt();
        continue;
      }
      const command = input.toLowerCase();
      if (command === "exit" || command === "quit") break;
      if (command === "help") writeStderr(HELP);
      else if (command === "clear") writeStderr(terminal ? "\x1b[2J\x1b[H" : "");
      else if (command === "status") {
        writeStderr(
          [
            `provider:  ${config.model.provider.provider}`,
            `model:     ${config.model.settings.model}`,
            `workspace: ${session.workspace}`,
            `tools:     ${executor.tools.map((t) => t.name).join(", ")}`,
            `tasks run: ${tasks}, tokens used: ${tokens}`,
            `config:    ${config.configPath ?? "(defaults)"}`,
          ].join("\n"),
        );
      } else {
        current = new AbortController();
        try {
          const { recorder } = await runTask(session, input, {
            signal: current.signal,
            trajectoryFile: opts.trajectoryFile
              ? opts.trajectoryFile.replace(/(\.json)?$/, `.${tasks + 1}.json`)
              : undefined,
          });
          tokens += recorder.data.total_usage.input_tokens +
            recorder.data.total_usage.output_tokens;
        } catch (e) {
          console.note(`task failed: ${e instanceof Error ? e.message : String(e)}`);
        } finally {
          current = undefined;
          tasks++;
        }
      }
      prompt();
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    for (const e of await executor.closeTools()) console.note(`warning: ${e.message}`);
  }
  writeStderr("bye");
  return 0;
}
