/**
 * `/rewind` on a real pseudo-terminal: a file changed outside Deft since the last turn is named
 * and the user asked; no keeps every file as it is, yes restores the checkpoint.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { BUGGY, CHECK, makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

const ENTER = "\r";

/** Waits until a trajectory under `state` records a checkpoint of `turn`. */
async function checkpointOf(state: string, turn: number): Promise<void> {
  const dir = `${state}/deft/trajectories`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const names: string[] = [];
    try {
      for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    } catch { /* not made yet */ }
    for (const name of names) {
      const text = await Deno.readTextFile(`${dir}/${name}`).catch(() => "");
      try {
        if (JSON.parse(text).checkpoints?.some((c: { turn: number }) => c.turn === turn)) return;
      } catch { /* being written */ }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no checkpoint of turn ${turn} in ${dir}`);
}

Deno.test("/rewind (pty): a file changed outside Deft is named and asked about; no loses nothing, yes restores", async () => {
  const repo = await makeBuggyRepo();
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "a - b",
      new_str: "a + b",
    }]]),
    chatText("Fixed it."),
  ]);
  const mine = "# the user's own line\r\n";
  try {
    const running = interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "fix calc" + ENTER },
      // The test changes check.py meanwhile, once turn 1's checkpoint is recorded.
      { expect: "Fixed it\\.[\\s\\S]*deft> ", send: "/rewind" + ENTER, delay: 3 },
      { expect: "rewind to which checkpoint\\? \\(number; empty: none\\)> ", send: "0" + ENTER },
      { expect: "restore: files, conversation or both\\?[^\\n]*> ", send: "files" + ENTER },
      {
        expect: "check\\.py changed outside Deft since the last turn; overwrite\\? \\(y/N\\)> ",
        send: "n" + ENTER,
      },
      { expect: "nothing rewound\\.[\\s\\S]*deft> ", send: "!cat check.py calc.py" + ENTER },
      { expect: "return a \\+ b[\\s\\S]*deft> ", send: "/rewind 0 files" + ENTER },
      { expect: "overwrite\\? \\(y/N\\)> ", send: "y" + ENTER },
      { expect: "rewound the files to checkpoint 0[\\s\\S]*deft> ", send: "/exit" + ENTER },
    ], { args: ["--approval", "never"], cwd: h, env });
    await checkpointOf(`${h}/state`, 1);
    await Deno.writeTextFile(`${repo}/check.py`, mine);
    const r = await running;
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // After "n": the user's edit and Deft's turn both still there (shown by `!cat`).
    const afterNo = out.slice(out.indexOf("nothing rewound."), out.indexOf("/rewind 0 files"));
    assert.match(afterNo, /# the user's own line[\s\S]*return a \+ b/);
    assert.match(out, /these files were|this file was/);
    // After "y": both back to turn 0.
    assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY);
    assert.equal(await Deno.readTextFile(`${repo}/check.py`), CHECK);
  } finally {
    await mock.close();
  }
});
