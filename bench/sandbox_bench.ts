/**
 * What the sandbox costs a one-shot editor call: `deft tool str_replace_based_edit_tool view`
 * with `--sandbox none` (the tool worker in Deft's process) and `--sandbox workspace-write` (Deft
 * started again inside bubblewrap as the tool host), against `deft tool task_done` in the same
 * run. A session pays the sandboxed host's start once, at its first file-tool call.
 */
import { deftFlags } from "../scripts/deft_flags.ts";
import { median, ms, timeCommand } from "./timing.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const RUNS = 9;

export default async function sandboxBench(): Promise<void> {
  const deno = Deno.execPath();
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-bench-sandbox-" }));
  try {
    await Deno.writeTextFile(`${ws}/a.txt`, "one\ntwo\n");
    const deft = (...args: string[]) => ["run", ...deftFlags(), `${ROOT}main.ts`, ...args];
    const view = JSON.stringify({ command: "view", path: `${ws}/a.txt` });
    const cases: Record<string, string[]> = {
      "tool task_done": deft("tool", "task_done", "{}", "-w", ws),
      "view, sandbox none": deft("tool", "str_replace_based_edit_tool", view, "-w", ws),
      "view, sandbox workspace-write": deft(
        "tool",
        "--sandbox",
        "workspace-write",
        "str_replace_based_edit_tool",
        view,
        "-w",
        ws,
      ),
    };
    for (const args of Object.values(cases)) await timeCommand(deno, args, ws); // warm caches
    const times: Record<string, number[]> = {};
    for (let i = 0; i < RUNS; i++) {
      for (const [name, args] of Object.entries(cases)) {
        (times[name] ??= []).push(await timeCommand(deno, args, ws));
      }
    }
    const base = median(times["tool task_done"]);
    console.log(`sandbox: deft tool task_done ${ms(base)} (median of ${RUNS})`);
    for (const name of Object.keys(cases).slice(1)) {
      const m = median(times[name]);
      console.log(`sandbox: ${name} ${ms(m)}; ratio to task_done ${(m / base).toFixed(2)}`);
    }
    const cost = median(times["view, sandbox workspace-write"]) -
      median(times["view, sandbox none"]);
    console.log(`sandbox: starting the sandboxed tool host adds ${ms(cost)} to a one-shot call`);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
}

if (import.meta.main) await sandboxBench();
