/**
 * `bash_output` and `kill_shell`: the model's handles on the background shells `bash` started
 * (background.ts). They run beside the bash tool, in the same worker and tool context, and act on
 * its registry; they never wait for the shell's queue, so they answer while a foreground command
 * runs.
 */
import { fail, ok, Tool, type ToolExecResult } from "../base.ts";
import {
  type BackgroundJob,
  backgroundShells,
  type JobRead,
  KEPT_OUTPUTS,
  OUTPUT_BYTES,
} from "./background.ts";
import { BASH_OUTPUT, KILL_SHELL, LIST_SHELLS, STARTED_AFTER } from "./definition.ts";

const DEFAULT_OUTPUT_LIMIT = 30_000;

/** `bash_output`: what a background shell printed since the last read, and its state. */
export class BashOutputTool extends Tool {
  readonly name = BASH_OUTPUT.name;
  readonly description = BASH_OUTPUT.description;
  readonly parameters = BASH_OUTPUT.parameters;

  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    return Promise.resolve(this.#read(args));
  }

  #read(args: Record<string, unknown>): ToolExecResult {
    if (args.shell_id === LIST_SHELLS) return ok(listShells(backgroundShells(this.context).all()));
    const found = findJob(this.context, args.shell_id);
    if (typeof found === "string") return fail(found);
    let filter: RegExp | undefined;
    if (args.filter !== undefined && args.filter !== null && args.filter !== "") {
      if (typeof args.filter !== "string") {
        return fail("Invalid `filter`: it must be a string holding a regular expression.");
      }
      try {
        filter = new RegExp(args.filter);
      } catch (e) {
        return fail(
          `Invalid \`filter\` ${JSON.stringify(args.filter)}: ${(e as Error).message}. It must ` +
            `be a JavaScript regular expression, e.g. "error|warn" or "^GET ". Nothing was read: ` +
            `the output is still there for the next call.`,
        );
      }
    }
    const limit = this.context.settings.outputLimit ?? DEFAULT_OUTPUT_LIMIT;
    const read = found.read(filter, limit);
    const shown = describeRead(found, read, args.filter as string | undefined, limit);
    if (read.state !== "killed") return ok(shown);
    return fail(
      `Background shell ${found.id} was killed: ${read.why}. It is not running any more; start ` +
        `the command again with bash \`run_in_background: true\` if it is still needed.`,
      -1,
      shown,
    );
  }
}

/** `kill_shell`: kills a background shell and every process it started. */
export class KillShellTool extends Tool {
  readonly name = KILL_SHELL.name;
  readonly description = KILL_SHELL.description;
  readonly parameters = KILL_SHELL.parameters;

  async execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    if (args[STARTED_AFTER] !== undefined) return await killStartedAfter(this.context, args);
    const found = findJob(this.context, args.shell_id);
    if (typeof found === "string") return fail(found);
    switch (found.state) {
      case "killed":
        return fail(
          `Background shell ${found.id} was killed already: ${found.why}. Nothing to stop.`,
        );
      case "exited":
        // What it left behind (a daemon it started) goes too.
        await found.kill("");
        return ok(
          `Background shell ${found.id} had already exited (exit code ${found.exitCode}); ` +
            `anything it left running was stopped. Its unread output can still be read with ` +
            `bash_output.`,
        );
      case "running":
        await found.kill("it was stopped with kill_shell");
        return ok(
          `Killed background shell ${found.id} (${oneLine(found.command)}) and every process ` +
            `it started.`,
        );
    }
  }
}

/**
 * Deft's own call after a rewind (`STARTED_AFTER`): kills the shells started after that time, in
 * the turns taken back; says which, one a line (id and command), or that none ran.
 */
async function killStartedAfter(
  context: object,
  args: Record<string, unknown>,
): Promise<ToolExecResult> {
  const since = new Date(String(args[STARTED_AFTER]));
  if (args.shell_id !== LIST_SHELLS || Number.isNaN(since.getTime())) {
    return fail(
      `\`${STARTED_AFTER}\` takes an ISO time, with \`shell_id\` "${LIST_SHELLS}"; nothing was killed.`,
    );
  }
  const killed = await backgroundShells(context).killStartedAfter(
    since,
    "the turn that started it was taken back by a rewind",
  );
  return ok(killed.map((job) => `${job.id}  ${oneLine(job.command)}`).join("\n"));
}

/** The job `shellId` names in this context, or what to tell the model when there is none. */
function findJob(context: object, shellId: unknown): BackgroundJob | string {
  if (typeof shellId !== "string" || shellId.trim() === "") {
    return "Missing `shell_id`: pass the `shell_id` the bash call with `run_in_background: " +
      "true` answered with.";
  }
  const shells = backgroundShells(context);
  const job = shells.find(shellId.trim());
  if (job) return job;
  const running = shells.running().map((j) => j.id);
  return `No background shell with id '${shellId}' in this session (an id from another ` +
    `session, or a mistyped one). ` +
    (running.length > 0
      ? `Running now: ${running.join(", ")}.`
      : "None is running now; start one with bash `run_in_background: true`.");
}

function describeRead(
  job: BackgroundJob,
  read: JobRead,
  filter: string | undefined,
  limit: number,
): string {
  const status = read.state === "exited" ? `exited (exit code ${read.exitCode})` : read.state;
  const lines = [`shell_id: ${job.id}`, `status: ${status}`];
  if (read.droppedBytes > 0) {
    lines.push(
      `[… ${read.droppedBytes} bytes dropped: not read in time (at most ` +
        `${OUTPUT_BYTES / (1 << 20)} MiB of unread output is kept per shell, the newest, and ` +
        `only for the ${KEPT_OUTPUTS} shells that ended last) …]`,
    );
  }
  if (read.hiddenChars > 0) {
    lines.push(
      `[… ${read.hiddenChars} characters of the new output not shown: only the newest ` +
        `${limit} are; use \`filter\` to pick lines …]`,
    );
  }
  const what = filter ? `new output matching ${JSON.stringify(filter)}` : "new output";
  if (filter && read.filteredLines > 0) {
    lines.push(`(${read.filteredLines} new line(s) not matching the filter were discarded)`);
  }
  lines.push(read.text === "" ? `(no ${what})` : `${what}:\n${read.text}`);
  return lines.join("\n");
}

/** One line per shell: id, status, unread bytes, when it started, its command. */
export function listShells(jobs: readonly BackgroundJob[]): string {
  if (jobs.length === 0) return "No background shells in this session.";
  return jobs.map((job) => {
    const status = job.state === "exited" ? `exited (exit code ${job.exitCode})` : job.state;
    const started = job.startedAt.toISOString().slice(11, 19);
    return `${job.id}  ${status}  ${job.unreadBytes} bytes unread  started ${started}  ` +
      oneLine(job.command);
  }).join("\n");
}

function oneLine(command: string): string {
  // deno-lint-ignore no-control-regex -- control characters are what is replaced.
  const first = command.trim().split("\n")[0].replace(/[\x00-\x1f\x7f-\x9f]/g, "\ufffd");
  return first.length > 80 || command.trim().includes("\n") ? `${first.slice(0, 80)}…` : first;
}
