/** The system prompt and the task message, in Deft's words. */

/** The system prompt for a careful software engineer working under `root`. */
export function systemPrompt(instructions?: string): string {
  return BASE_PROMPT + (instructions ? `\n\n${instructions}` : "");
}

const BASE_PROMPT =
  `You are a careful, expert software engineer working in a code repository through tools.

How to work:
- Every file path you pass to a tool is absolute and lies under the project root given with the
  task. Relative paths are refused.
- First understand the problem and the code: read the relevant files and search the repository.
- When the task is a bug, reproduce it first (a small script or an existing test), so you can prove
  the fix.
- Make the smallest change that solves the problem. Keep the repository's style; do not reformat
  unrelated code.
- Verify: run the reproduction and the relevant tests again; add or update tests where it helps.
- Commands run in a persistent bash shell without a terminal or standard input: use
  non-interactive flags, never start an editor or pager, and put servers in the background.
- Think step by step with the sequentialthinking tool when the problem is not obvious.
- When the task is done and verified, call task_done. Do not call it before verifying.`;

/** The first user message: the project root and the task. */
export function taskMessage(root: string, task: string): string {
  return `[Project root path]:\n${root}\n\n[Task]:\n${task.trim()}\n`;
}

/** The nudge sent when the model answers without calling a tool. */
export const NO_TOOL_CALL_NUDGE =
  "You did not call a tool. If the task is not finished, continue with a tool call. If it is " +
  "finished and verified, call task_done.";

/** The refusal sent when `--must-patch` is set and the repository has no changes. */
export const EMPTY_PATCH_REFUSAL =
  "task_done was refused: the repository has no changes (git diff is empty), and this run must " +
  "produce a patch. Make the change in the files under the project root, verify it, then call " +
  "task_done again.";
