/**
 * The promise matrix's cells: what each promise looks like from outside, checked on one front
 * end's evidence (what the model or client read, the workspace's files, what the user was shown,
 * the questions asked, the spans exported). Each check reads its own cell's call ids and marker
 * files only, so one broken gate turns its own cell red.
 */
import assert from "node:assert/strict";
import { type Cell, exists, type ReceivedSpan, type Stage, WORDS } from "./promise_matrix.ts";

/** What one front end left behind, as the cells read it. */
export interface Evidence {
  stage: Stage;
  /** What the model (or the client) read as the result of call `id`. */
  result(id: string): string;
  /** Whether the cell's marker file `name` is in the workspace. */
  made(name: string): Promise<boolean>;
  /** Everything the model (or the client, for a tool server) received. */
  received(): string;
  /** Everything shown or recorded for the user (stdout, stderr, trajectory, editor updates);
   * null where results go only to the client (serve, mcp), which Deft does not mask. */
  userOutput(): string | null;
  /** Where someone can be asked: the question about `command`, or null when none was asked. */
  asked?(command: string): string | null;
  /** The question names the ask rule that asked it (the terminal does; ACP's has no room). */
  questionNamesRule?: boolean;
  /** The editor's writes through the ACP client, where the client offers its file system. */
  clientWrites?(): string[];
  /** The spans this front end exported. */
  spans(): ReceivedSpan[];
  /** Whether its tool calls must have spans: not where no run starts a trace (serve, mcp). */
  traced: boolean;
}

/** Checks `cell` on `ev`; `headless`: nobody can be asked, so an ask must refuse. */
export async function checkCell(cell: Cell, ev: Evidence, headless: boolean): Promise<void> {
  switch (cell) {
    case "a": {
      assert.equal(await ev.made("a.made"), false, "the exit-2 hook did not stop the call");
      assert.ok(ev.result("mx-a-0").includes(WORDS.exit2Reason), ev.result("mx-a-0"));
      return;
    }
    case "b": {
      assert.equal(await ev.made("b.made"), false, "the JSON deny hook did not stop the call");
      assert.ok(ev.result("mx-b-0").includes(WORDS.jsonReason), ev.result("mx-b-0"));
      return;
    }
    case "c": {
      assert.equal(await ev.made("c.made"), true, `the call did not run: ${ev.result("mx-c-0")}`);
      assert.ok(
        ev.result("mx-c-0").includes(WORDS.postContext),
        `the PostToolUse context did not reach the result: ${ev.result("mx-c-0")}`,
      );
      return;
    }
    case "d": {
      assert.equal(await ev.made("d.made"), false, "the deny rule did not stop the call");
      assert.ok(ev.result("mx-d-0").includes(WORDS.denyRule.slice(2)), ev.result("mx-d-0"));
      return;
    }
    case "e": {
      assert.equal(await ev.made("e.made"), false, "a call an ask rule matched ran unasked");
      if (headless) {
        // Nobody to ask: refused, and the model is told which rule.
        assert.ok(ev.result("mx-e-0").includes(WORDS.askRule.slice(2)), ev.result("mx-e-0"));
      } else {
        const question = ev.asked!("touch e.made");
        assert.ok(question, "the ask rule's call was not asked about");
        if (ev.questionNamesRule) {
          assert.ok(question.includes(WORDS.askRule), `the question names no rule: ${question}`);
        }
      }
      return;
    }
    case "f": {
      assert.equal(await ev.made("f.made"), false, "approval mode commands let a command run");
      if (!headless) assert.ok(ev.asked!("touch f.made"), "the command was not asked about");
      return;
    }
    case "g": {
      const { outside } = ev.stage;
      assert.equal(await exists(`${outside}/g.made`), false, "the shell wrote outside");
      assert.equal(await Deno.readTextFile(`${outside}/g-keep.txt`), "kept\n", "edited outside");
      for (const path of ev.clientWrites?.() ?? []) {
        assert.ok(!path.startsWith(outside), `the client was asked to write ${path}`);
      }
      return;
    }
    case "h": {
      const { envSecret, fileSecret } = ev.stage;
      assert.match(ev.result("mx-h-0"), /env:/, `the command did not run: ${ev.result("mx-h-0")}`);
      assert.ok(!ev.received().includes(envSecret), "the shell saw the secret variable");
      const shown = ev.userOutput();
      if (shown === null) return;
      assert.ok(!shown.includes(envSecret), "the secret variable's value was shown");
      assert.ok(!shown.includes(fileSecret), "a token printed by a command was shown unmasked");
      assert.match(shown, /OPENAI_API_KEY=\*\*\*/, "the masked output never reached the user");
      return;
    }
    case "i": {
      const spans = ev.spans();
      assert.ok(
        !ev.traced || spans.some((s) => s.name === "execute_tool bash"),
        `no execute_tool span was exported (${spans.map((s) => s.name).join(", ")})`,
      );
      const leaked = spans.filter((s) => JSON.stringify(s.raw).includes(ev.stage.spanMarker));
      assert.deepEqual(
        leaked.map((s) => JSON.stringify(s.raw)),
        [],
        "a span holds the command or its output",
      );
      return;
    }
  }
}
