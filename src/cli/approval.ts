/**
 * The question `deft run` puts on the terminal when a call needs approval (`deft interactive`
 * asks through its own prompt instead).
 */
import { createInterface } from "node:readline";
import process from "node:process";
import type { AskUser } from "../agent/approval.ts";

/** Asks one question on the terminal (stdin, stderr); null at end of input. */
export const askOnTerminal: AskUser = (question) =>
  new Promise((resolve) => {
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
  });
