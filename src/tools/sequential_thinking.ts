/**
 * A scratchpad for step-by-step reasoning. It changes nothing outside itself: it records each
 * thought, its revisions and branches, and reports where the chain stands.
 */
import type { ToolDefinitionSource } from "./catalog_types.ts";
import { fail, ok, Tool, type ToolExecResult } from "./base.ts";

interface Thought {
  thought: string;
  thought_number: number;
  total_thoughts: number;
  next_thought_needed: boolean;
  is_revision?: boolean;
  revises_thought?: number;
  branch_from_thought?: number;
  branch_id?: string;
  needs_more_thoughts?: boolean;
}

/** The model-facing definition of "sequentialthinking". */
export const SEQUENTIAL_THINKING: ToolDefinitionSource = {
  name: "sequentialthinking",
  description:
    "Think through a problem one numbered thought at a time. Use it to plan, to question an " +
    "earlier thought (is_revision + revises_thought), to explore an alternative " +
    "(branch_from_thought + branch_id), or to extend the plan when it turns out longer " +
    "(raise total_thoughts or set needs_more_thoughts). Set next_thought_needed to false only " +
    "when the reasoning has reached a conclusion you are ready to act on. Nothing outside this " +
    "scratchpad changes.",
  parameters: [
    { name: "thought", type: "string", description: "The current thought.", required: true },
    {
      name: "next_thought_needed",
      type: "boolean",
      description: "Whether another thought should follow this one.",
      required: true,
    },
    {
      name: "thought_number",
      type: "integer",
      description: "Number of this thought, starting at 1.",
      required: true,
    },
    {
      name: "total_thoughts",
      type: "integer",
      description: "Current estimate of how many thoughts are needed (can change).",
      required: true,
    },
    {
      name: "is_revision",
      type: "boolean",
      description: "True when this thought revises an earlier one.",
    },
    {
      name: "revises_thought",
      type: "integer",
      description: "With is_revision: the number of the thought being reconsidered.",
    },
    {
      name: "branch_from_thought",
      type: "integer",
      description: "The thought number this alternative line of reasoning starts from.",
    },
    {
      name: "branch_id",
      type: "string",
      description: "A name for the branch, required with branch_from_thought.",
    },
    {
      name: "needs_more_thoughts",
      type: "boolean",
      description: "True when the end was reached but more thoughts turned out to be needed.",
    },
  ],
};

/** `sequentialthinking`: keeps the thought history for the life of the tool. */
export class SequentialThinkingTool extends Tool {
  readonly name = SEQUENTIAL_THINKING.name;
  readonly description = SEQUENTIAL_THINKING.description;
  readonly parameters = SEQUENTIAL_THINKING.parameters;

  readonly #history: Thought[] = [];
  readonly #branches = new Map<string, Thought[]>();

  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    const thought = { ...args } as unknown as Thought;
    const problem = this.#check(thought);
    if (problem) {
      return Promise.resolve(fail(
        `Sequential thinking failed: ${problem}\n\nDetails:\n` +
          JSON.stringify({ error: problem, status: "failed" }, null, 2),
      ));
    }
    if (thought.thought_number > thought.total_thoughts) {
      thought.total_thoughts = thought.thought_number;
    }
    this.#history.push(thought);
    if (thought.branch_from_thought !== undefined && thought.branch_id !== undefined) {
      const branch = this.#branches.get(thought.branch_id) ?? [];
      branch.push(thought);
      this.#branches.set(thought.branch_id, branch);
    }
    const status = {
      thought_number: thought.thought_number,
      total_thoughts: thought.total_thoughts,
      next_thought_needed: thought.next_thought_needed,
      branches: [...this.#branches.keys()],
      thought_history_length: this.#history.length,
    };
    return Promise.resolve(
      ok(`Sequential thinking step completed.\n\nStatus:\n${JSON.stringify(status, null, 2)}`),
    );
  }

  #check(t: Thought): string | undefined {
    if (t.thought.trim() === "") return "thought must not be empty";
    if (t.thought_number < 1) return "thought_number must be at least 1";
    if (t.total_thoughts < 1) return "total_thoughts must be at least 1";
    if (t.revises_thought !== undefined) {
      if (t.revises_thought < 1) return "revises_thought must be a positive integer";
      if (t.revises_thought >= t.thought_number) {
        return `revises_thought (${t.revises_thought}) must name an earlier thought than ` +
          `thought_number (${t.thought_number})`;
      }
    }
    if (t.branch_from_thought !== undefined) {
      if (t.branch_from_thought < 1) return "branch_from_thought must be a positive integer";
      if (t.branch_id === undefined || t.branch_id.trim() === "") {
        return "branch_id is required with branch_from_thought";
      }
    }
    return undefined;
  }
}
