/**
 * Which prompts are Deft's slash commands in an editor, and how they are advertised: the six
 * ACP commands with `deft interactive`'s descriptions and their input hints; a terminal-only
 * command refused; anything else (a path, an unknown word) a prompt for the model.
 */
import assert from "node:assert/strict";
import { commandIn, commandsUpdate, commandText } from "../../src/acp/commands.ts";
import { slashCommands } from "../../src/cli/interactive/commands.ts";

Deno.test("acp commands: the six are advertised with their help and input hints", () => {
  const update = commandsUpdate(slashCommands());
  assert.equal(update.sessionUpdate, "available_commands_update");
  assert.deepEqual(update.availableCommands.map((c) => c.name), [
    "compact",
    "undo",
    "rewind",
    "init",
    "cost",
    "status",
  ]);
  const compact = update.availableCommands[0];
  assert.match(compact.description, /summary/);
  assert.deepEqual(compact.input, { hint: "[instructions]" });
  assert.equal(update.availableCommands[4].input, undefined);
});

Deno.test("acp commands: a prompt is a command, a refused command, or the model's", () => {
  const infos = slashCommands();
  assert.deepEqual(commandIn("/cost", infos), { command: "/cost" });
  assert.deepEqual(commandIn("  /COMPACT keep the plan\n", infos), {
    command: "/COMPACT keep the plan",
  });
  assert.match((commandIn("/exit", infos) as { refused: string }).refused, /not of the editor/);
  assert.match((commandIn("/model x", infos) as { refused: string }).refused, /model option/);
  assert.equal(commandIn("/tmp/x is missing", infos), undefined);
  assert.equal(commandIn("/nosuch thing", infos), undefined);
  assert.equal(commandIn("please /cost", infos), undefined);
});

Deno.test("acp commands: a table keeps its columns in a code block; a line stays a line", () => {
  assert.equal(commandText("no model calls yet."), "no model calls yet.\n");
  assert.equal(commandText("a  1\nb  2\n"), "```\na  1\nb  2\n```\n");
});
