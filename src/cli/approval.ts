/**
 * The question `deft run` puts on the terminal when a call needs approval (`deft interactive`
 * asks through its own prompt instead). While the question is open it owns the screen: the
 * console's spinner is stopped (`hold`), so nothing is drawn over the prompt or the typed answer.
 */
import { createInterface } from "node:readline";
import process from "node:process";
import type { AskUser } from "../gate/question.ts";
import { holdScreen } from "./console/spinner.ts";
import { writeStderr } from "./io.ts";
import { terminalText } from "../policy/terminal_text.ts";

/** Asks one question on the terminal (stdin, stderr); null at end of input. */
export const askOnTerminal: AskUser = Object.assign(
  (question: string) =>
    new Promise<string | null>((resolve) => {
      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
      let answered = false;
      rl.question(question, (line) => {
        answered = true;
        rl.close();
        resolve(line);
      });
      rl.on("close", () => {
        if (!answered) resolve(null);
      });
      // The terminal is in raw mode while asking: pass Ctrl-C on to the run as the signal it is.
      rl.on("SIGINT", () => {
        rl.close();
        Deno.kill(Deno.pid, "SIGINT");
      });
    }),
  { hold: holdScreen, tell: (text: string) => writeStderr(terminalText(text)) },
);
