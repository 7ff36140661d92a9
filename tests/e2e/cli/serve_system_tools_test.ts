/**
 * `deft serve` with the tools that touch the system: one persistent shell across lines, the editor
 * writing real files byte-exact, the workspace boundary, and no process left behind at the end.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";

function lines(stdout: string): Record<string, unknown>[] {
  return stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
}

const ndjson = (calls: unknown[]) => calls.map((c) => JSON.stringify(c)).join("\n") + "\n";

async function workspace(): Promise<string> {
  return await tempDirUntilExit("deft-serve-ws-");
}

Deno.test("serve: bash keeps one shell across lines; the editor edits byte-exact; nothing outlives it", async () => {
  const ws = await workspace();
  await using outsideDir = await tempDir("deft-serve-out-");
  const outside = outsideDir.path;
  // A duration no other test uses, so pgrep finds only this run's job.
  const sleeper = `sleep 900.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  try {
    // Tabs and CRLF line ends: the edit must keep both.
    await Deno.writeTextFile(`${ws}/app.go`, "func main() {\r\n\tx := 1\r\n\treturn\r\n}\r\n");
    const run = await runDeft(["serve", "-w", ws], {
      stdin: ndjson([
        {
          id: 1,
          name: "bash",
          arguments: { command: "mkdir -p sub && cd sub && export GREET=hi" },
        },
        { id: 2, name: "bash", arguments: { command: 'echo "$GREET from $(pwd)"' } },
        {
          id: 3,
          name: "str_replace_based_edit_tool",
          arguments: {
            command: "str_replace",
            path: `${ws}/app.go`,
            old_str: "\tx := 1\n",
            new_str: "\tx := 2\n\ty := 3\n",
          },
        },
        {
          id: 4,
          name: "str_replace_based_edit_tool",
          arguments: { command: "create", path: `${ws}/sub/new.txt`, file_text: "made\n" },
        },
        { id: 5, name: "bash", arguments: { command: "cat new.txt" } },
        {
          id: 6,
          name: "str_replace_based_edit_tool",
          arguments: { command: "create", path: `${outside}/evil.txt`, file_text: "x" },
        },
        {
          id: 7,
          name: "bash",
          arguments: { command: `${sleeper} >/dev/null 2>&1 & echo started` },
        },
      ]),
    });
    assert.equal(run.code, 0, run.stderr);
    const out = lines(run.stdout);
    assert.deepEqual(out.map((o) => o.id), [1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(out.map((o) => o.success), [true, true, true, true, true, false, true]);
    assert.equal(out[1].output, `hi from ${ws}/sub\n`);
    assert.match(String(out[2].output), /has been edited/);
    assert.equal(
      await Deno.readTextFile(`${ws}/app.go`),
      "func main() {\r\n\tx := 2\r\n\ty := 3\r\n\treturn\r\n}\r\n",
      "the edit kept tabs and CRLF",
    );
    assert.equal(out[4].output, "made\n", "bash sees the file the editor created");
    assert.match(String(out[5].error), /outside|leaves the workspace/i);
    assert.equal(await Deno.stat(`${outside}/evil.txt`).then(() => true, () => false), false);
    // The end of input closed the tools: the background job is gone.
    const ps = await new Deno.Command("pgrep", { args: ["-f", sleeper] }).output();
    assert.equal(new TextDecoder().decode(ps.stdout).trim(), "", `${sleeper} outlived deft serve`);
  } finally {
    await new Deno.Command("pkill", { args: ["-f", sleeper] }).output();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("serve --parallel: a bash call and an editor call in one batch both land, in order", async () => {
  const ws = await workspace();
  try {
    await Deno.writeTextFile(`${ws}/a.txt`, "one\n");
    const batch = [
      { id: "sh", name: "bash", arguments: { command: "sleep 0.3; echo slow" } },
      {
        id: "ed",
        name: "str_replace_based_edit_tool",
        arguments: { command: "str_replace", path: `${ws}/a.txt`, old_str: "one", new_str: "two" },
      },
      { id: "bad", name: "bash", arguments: { command: 5 } },
    ];
    const run = await runDeft(["serve", "--parallel", "-w", ws], {
      stdin: JSON.stringify(batch) + "\n",
    });
    assert.equal(run.code, 0, run.stderr);
    const out = lines(run.stdout);
    assert.deepEqual(out.map((o) => o.id), ["sh", "ed", "bad"]);
    assert.deepEqual(out.map((o) => o.success), [true, true, false]);
    assert.equal(out[0].output, "slow\n");
    assert.match(String(out[2].error), /command/);
    assert.equal(await Deno.readTextFile(`${ws}/a.txt`), "two\n");
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("serve: a bash call past its timeout answers 124 and the next line still runs", async () => {
  const ws = await workspace();
  try {
    const run = await runDeft(["serve", "-w", ws], {
      stdin: ndjson([
        { id: 1, name: "bash", arguments: { command: "export KEEP=kept; sleep 60", timeout: 1 } },
        { id: 2, name: "bash", arguments: { command: 'echo "$KEEP"' } },
      ]),
    });
    assert.equal(run.code, 0, run.stderr);
    const out = lines(run.stdout);
    assert.deepEqual(out.map((o) => o.error_code), [124, 0]);
    assert.match(String(out[0].error), /timed out/);
    assert.equal(out[1].output, "kept\n", "the shell kept its state through the timeout");
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});
