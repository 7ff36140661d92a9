/** The done signal: the model calls it once the task is solved and verified. */
import { ok, Tool, type ToolExecResult, type ToolParameter } from "./base.ts";

/** `task_done`: no parameters; answers `Task done.` and ends the agent's run. */
export class TaskDoneTool extends Tool {
  readonly name = "task_done";
  readonly description =
    "Signal that the task is complete. Call it only after the change is made and verified " +
    "(for example by running the relevant tests or a reproduction script). Ends the run.";
  override readonly touchesSystem = false;
  readonly parameters: readonly ToolParameter[] = [];

  execute(): Promise<ToolExecResult> {
    return Promise.resolve(ok("Task done."));
  }
}
