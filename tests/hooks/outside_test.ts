/**
 * The load-time check of a hook that runs outside the sandbox (`sandbox: none`), and what
 * `deft hooks import` converts to one.
 */
import assert from "node:assert/strict";
import { Hooks } from "../../src/hooks/hooks.ts";
import { importClaudeHooks } from "../../src/hooks/import.ts";
import { outsideHookProblem } from "../../src/hooks/outside.ts";
import { tempDir } from "../helpers/temp.ts";

Deno.test("an outside hook that runs or reads the workspace's files is refused; one that keeps out of it is not", async () => {
  await using ws = await tempDir("deft-outside-ws-");
  await using elsewhere = await tempDir("deft-outside-else-");
  const w = ws.path;
  await Deno.mkdir(`${w}/bin`);
  await Deno.writeTextFile(`${w}/bin/fmt`, "#!/bin/sh\n");
  await Deno.chmod(`${w}/bin/fmt`, 0o755);
  // A link outside that leads into the workspace counts as the workspace.
  await Deno.symlink(`${w}/bin/fmt`, `${elsewhere.path}/fmt`);
  const refused = [
    "./scripts/tests-pass.sh",
    "scripts/x.sh --flag",
    "bash ./scripts/x.sh",
    'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/log.py"',
    "${DEFT_PROJECT_DIR}/hook.sh",
    "prettier --write .",
    "black --config=./pyproject.toml x",
    `${w}/bin/fmt`,
    `${elsewhere.path}/fmt`,
    "cd /tmp && ./run.sh",
    "$(cat .hook-program) arg",
    "FOO=1 ./x.sh",
  ];
  for (const command of refused) {
    assert.ok(outsideHookProblem(command, w), `not refused: ${command}`);
  }
  const allowed = [
    "notify-send 'Deft' 'done'",
    "echo done >> ~/deft-hooks.log",
    'jq -r .tool_name >> "$HOME/.claude/bash-log.txt"',
    `bash ${elsewhere.path}/notify.sh`,
    "osascript -e 'display notification \"done\"'",
  ];
  for (const command of allowed) {
    assert.equal(outsideHookProblem(command, w), undefined, `refused: ${command}`);
  }
  // The session refuses such a config at load, naming the hook and what to do.
  assert.throws(
    () =>
      new Hooks(
        { Stop: [{ hooks: [{ type: "command", command: "./notify.sh", sandbox: "none" }] }] },
        "/home/me/.config/deft/config.yaml",
        { cwd: w, report: () => {} },
      ),
    /Stop hook '\.\/notify\.sh' \(\/home\/me\/\.config\/deft\/config\.yaml\): its program \.\/notify\.sh lies inside the workspace[\s\S]*drop `sandbox: none`/,
  );
  // The same command, sandboxed, is fine: it runs where the model's own shell would.
  new Hooks(
    { Stop: [{ hooks: [{ type: "command", command: "./notify.sh" }] }] },
    undefined,
    { cwd: w, report: () => {} },
  );
});

Deno.test("import: a hook that logs under ~ or notifies the desktop comes over with `sandbox: none` and a note; others stay sandboxed", () => {
  const imported = importClaudeHooks({
    hooks: {
      PreToolUse: [{
        matcher: "Bash",
        hooks: [
          { type: "command", command: "jq -r .tool_input.command >> ~/.claude/bash-log.txt" },
          { type: "command", command: "./scripts/lint.sh" },
          { type: "command", command: "curl -s -d @- https://hooks.example.com/deft" },
        ],
      }],
      Stop: [{
        hooks: [
          { type: "command", command: "notify-send 'Claude' 'done'" },
          {
            type: "command",
            command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/say.sh | tee -a $HOME/x',
          },
        ],
      }],
    },
  });
  const pre = imported.hooks.PreToolUse![0].hooks;
  assert.equal(pre[0].sandbox, "none");
  assert.equal(pre[1].sandbox, undefined);
  assert.equal(pre[2].sandbox, "none");
  const stop = imported.hooks.Stop![0].hooks;
  assert.equal(stop[0].sandbox, "none");
  // It writes under ~, but its program is the project's: it stays sandboxed, and the note says
  // how to move it out.
  assert.equal(stop[1].sandbox, undefined);
  const notes = imported.notes.join("\n");
  assert.match(notes, /bash-log\.txt.*writes under your home folder.*`sandbox: none`.*as you/);
  assert.match(notes, /notify-send.*notifies the desktop.*`sandbox: none`/);
  assert.match(notes, /say\.sh.*runs a program from the project, so it stays sandboxed/);
});

Deno.test("in a container session an outside hook is judged against the container's workspace, not the folder Deft started in", async () => {
  await using started = await tempDir("deft-outside-host-");
  const config = {
    PostToolUse: [{
      hooks: [{
        type: "command" as const,
        command: `bash ${started.path}/peek.sh`,
        sandbox: "none" as const,
      }],
    }],
  };
  // `-w /testbed`: the model writes the container's folder, not the host folder the hook starts in.
  new Hooks(config, undefined, {
    cwd: started.path,
    modelWorkspace: "/testbed-not-on-this-host",
    report: () => {},
  });
  // A host folder bound into the container at its own path is the model's again.
  assert.throws(
    () =>
      new Hooks(config, undefined, {
        cwd: started.path,
        modelWorkspace: started.path,
        report: () => {},
      }),
    /peek\.sh, in the workspace/,
  );
});
