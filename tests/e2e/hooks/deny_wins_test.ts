/**
 * Issue 50's hooks promise: with two PreToolUse hooks, a deny from either refuses the call,
 * whatever the other said (allow, ask, nothing, a rewrite), in either config order, and whether the
 * deny is a JSON answer or an exit 2. Real hooks, run in the default sandbox.
 */
import assert from "node:assert/strict";
import { Hooks } from "../../../src/hooks/hooks.ts";
import { tempDir } from "../../helpers/temp.ts";

const answer = (decision: string, extra = "") =>
  `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"${decision}",` +
  `"permissionDecisionReason":"${decision} by hook"${extra}}}'`;

const OTHERS: Record<string, string> = {
  allow: answer("allow"),
  ask: answer("ask"),
  nothing: "true",
  rewrite: answer("allow", ',"updatedInput":{"command":"echo rewritten"}'),
};
const DENIES: Record<string, string> = {
  json: answer("deny"),
  "exit 2": "echo 'deny by hook' >&2; exit 2",
};

Deno.test("two PreToolUse hooks: a deny from either refuses the call, whatever the other said, in either order", async () => {
  await using ws = await tempDir("deft-hooks-deny-");
  for (const [otherName, other] of Object.entries(OTHERS)) {
    for (const [denyName, deny] of Object.entries(DENIES)) {
      for (const order of [[other, deny], [deny, other]]) {
        const hooks = new Hooks(
          {
            PreToolUse: [
              { matcher: "bash", hooks: [{ type: "command", command: order[0] }] },
              { hooks: [{ type: "command", command: order[1] }] },
            ],
          },
          undefined,
          { cwd: ws.path, report: () => {}, tell: () => {} },
        );
        const said = await hooks.preToolUse("bash", { command: "rm -rf x" });
        const which = `${otherName} + ${denyName} deny, ${
          order[0] === deny ? "deny first" : "deny last"
        }`;
        assert.equal(said.decision, "deny", `${which}: ${JSON.stringify(said)}`);
        assert.match(said.reason ?? "", /deny by hook/, which);
      }
    }
  }
});
