/** The done signal: the model calls it once the task is solved and verified. */
import type { ToolDefinitionSource } from "./catalog_types.ts";
import { ok, Tool, type ToolExecResult } from "./base.ts";

/** The model-facing definition of "task_done". */
export const TASK_DONE: ToolDefinitionSource = {
  name: "task_done",
  description:
    "Signal that the task is complete. Call it only after the change is made and verified " +
    "(for example by running the relevant tests or a reproduction script). Ends the run.",
  parameters: [],
};

/** `task_done`: no parameters; answers `Task done.` and ends the agent's run. */
export class TaskDoneTool extends Tool {
  readonly name = TASK_DONE.name;
  readonly description = TASK_DONE.description;
  readonly parameters = TASK_DONE.parameters;

  execute(): Promise<ToolExecResult> {
    return Promise.resolve(ok("Task done."));
  }
}
