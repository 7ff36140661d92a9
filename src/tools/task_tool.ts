/**
 * The `task` tool's definition: the model hands a piece of work to a child agent. The child runs in
 * the agent layer (src/agent/subagent.ts), which the session puts in this stand-in's place; a
 * command with no session to run a child in keeps the stand-in, which says so (`deft tool`; `deft
 * serve` and `deft mcp` do not offer it: `servedToolNames`).
 */
import type { ToolDefinitionSource } from "./catalog_types.ts";
import { fail, Tool, type ToolExecResult } from "./base.ts";

/** The model-facing definition of "task". */
export const TASK: ToolDefinitionSource = {
  name: "Task",
  description: "Hand a self-contained piece of work to a child agent with its own context, and " +
    "wait for its answer. In mode `write` (default) the child works in its own git worktree of " +
    "the workspace (a copy of it as it is now, uncommitted changes included): your tree is not " +
    "changed; the result gives the child's final answer, the files it changed and its patch, " +
    "named by an id. To take a child's changes into your tree, call this tool again with only " +
    '`{"apply": "<id>"}` (and `files` for some of them): each file is written by your file ' +
    "editor, as your own edit. In mode `read` the child only investigates, with a read-only " +
    "view of your tree. The child has a deadline and a step limit; several may run at once.",
  parameters: [
    {
      name: "description",
      type: "string",
      description: "A few words naming the piece of work (shown to the user). Required to " +
        "start a child.",
    },
    {
      name: "prompt",
      type: "string",
      description: "The whole task for the child: it sees nothing of your conversation. " +
        "Required to start a child.",
    },
    {
      name: "tools",
      type: "array",
      items: { type: "string" },
      description: "The tools the child may use (default: yours).",
      required: false,
    },
    {
      name: "mode",
      type: "string",
      enum: ["write", "read"],
      description: "`write`: its own worktree (default); `read`: a read-only view of your tree.",
      required: false,
    },
    {
      name: "apply",
      type: "string",
      description: "Instead of starting a child: the id of a finished child's patch, to write " +
        "its changes into your tree (nothing is written if any file no longer matches).",
      required: false,
    },
    {
      name: "files",
      type: "array",
      items: { type: "string" },
      description: "With `apply`: only these files of the patch (paths as the patch names them).",
      required: false,
    },
  ],
};

/** `task` where no session can run a child: every call says so. */
export class TaskStandInTool extends Tool {
  readonly name = TASK.name;
  readonly description = TASK.description;
  readonly parameters = TASK.parameters;

  execute(): Promise<ToolExecResult> {
    return Promise.resolve(
      fail("The task tool runs child agents only inside a Deft session (deft run, interactive)."),
    );
  }
}
