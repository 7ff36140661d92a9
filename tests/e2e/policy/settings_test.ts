/**
 * One resolution of the sandbox and tool settings for every command: flags > environment >
 * config file > defaults, for `deft tool` and `deft serve` as for `deft run`; the read-only
 * sandbox; a missing bubblewrap reported at start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveToolSettings } from "../../../src/config/tool_settings.ts";
import { defaultSandbox } from "../../../src/policy/sandbox.ts";
import { runDeft } from "../../helpers/deft.ts";
import { Place, toolResult } from "../../helpers/places.ts";

Deno.test("tool settings: flags over DEFT_SANDBOX over the file over the defaults", () => {
  const env = (values: Record<string, string>) => (name: string) => values[name];
  const file = { sandbox: "workspace-write" as const, allow_network: true, tool_settings: {} };
  // Nothing asked: the safe default (workspace-write here, where bubblewrap works).
  assert.equal(resolveToolSettings({}, {}, env({})).sandbox, defaultSandbox().mode);
  assert.equal(defaultSandbox().mode, "workspace-write", "CI installs bubblewrap");
  const none = { sandbox: "none" as const, tool_settings: {} };
  assert.equal(resolveToolSettings(none, {}, env({})).sandbox, "none", "a chosen none stays");
  assert.equal(resolveToolSettings(file, {}, env({})).sandbox, "workspace-write");
  assert.equal(resolveToolSettings(file, {}, env({})).allowNetwork, true);
  const fromEnv = env({ DEFT_SANDBOX: "read-only", DEFT_ALLOW_NETWORK: "0" });
  assert.equal(resolveToolSettings(file, {}, fromEnv).sandbox, "read-only");
  assert.equal(resolveToolSettings(file, {}, fromEnv).allowNetwork, false);
  assert.equal(resolveToolSettings(file, { sandbox: "none" }, fromEnv).sandbox, "none");
  assert.equal(
    resolveToolSettings({ tool_settings: { bash_timeout: 7 } }, {}, env({})).bashTimeoutSeconds,
    7,
  );
  assert.throws(
    () => resolveToolSettings({}, {}, env({ DEFT_SANDBOX: "strict" })),
    /DEFT_SANDBOX is 'strict'; use one of none, workspace-write, read-only/,
  );
});

Deno.test({
  name: "tool settings: `sandbox: workspace-write` in the config file confines `deft tool bash`",
  sanitizeResources: false,
  async fn() {
    const place = await Place.create({ bundle: false });
    try {
      const ws = await place.workspace("ws");
      const config = join(place.root, "deft.yaml");
      await Deno.writeTextFile(config, "sandbox: workspace-write\n");
      const outside = join(place.home, "outside.txt");
      const env = { HOME: place.home, DEFT_CONFIG: config, TMPDIR: place.tmp };
      const bash = (command: string, extra: string[] = [], more: Record<string, string> = {}) =>
        runDeft(["tool", "bash", JSON.stringify({ command }), "-w", ws, ...extra], {
          env: { ...env, ...more },
        });

      const confined = toolResult(await bash(`echo x > '${outside}'; echo in > '${ws}/in.txt'`));
      assert.match(confined.output + confined.error, /Read-only file system/);
      await assert.rejects(Deno.stat(outside), Deno.errors.NotFound);
      assert.equal(await Deno.readTextFile(`${ws}/in.txt`), "in\n");

      // The flag still wins over the file.
      const free = toolResult(await bash(`echo x > '${outside}'`, ["--sandbox", "none"]));
      assert.equal(free.success, true, free.error);
      assert.equal(await Deno.readTextFile(outside), "x\n");

      // --sandbox read-only: the shell sees the workspace read-only, the editor refuses writes.
      const ro = toolResult(await bash(`echo y > '${ws}/ro.txt'`, ["--sandbox", "read-only"]));
      assert.match(ro.output + ro.error, /Read-only file system/);
      await assert.rejects(Deno.stat(`${ws}/ro.txt`), Deno.errors.NotFound);
      const edit = await runDeft([
        "tool",
        "str_replace_based_edit_tool",
        JSON.stringify({ command: "create", path: `${ws}/ro.py`, file_text: "" }),
        "-w",
        ws,
      ], { env: { ...env, DEFT_SANDBOX: "read-only" } });
      assert.match(toolResult(edit).error, /workspace is read-only \(sandbox: read-only\)/);
      await assert.rejects(Deno.stat(`${ws}/ro.py`), Deno.errors.NotFound);
      const view = toolResult(
        await bash(`cat '${ws}/in.txt'`, [], { DEFT_SANDBOX: "read-only" }),
      );
      assert.equal(view.output.trim(), "in");
    } finally {
      await place.remove();
    }
  },
});

Deno.test({
  name:
    "tool settings: a missing bubblewrap is reported at start by commands that run confined tools",
  sanitizeResources: false,
  async fn() {
    const place = await Place.create({ bundle: false });
    try {
      const ws = await place.workspace("ws");
      const env = { HOME: place.home, PATH: join(place.root, "no-bin") };
      const serve = await runDeft(["serve", "-w", ws, "--sandbox", "workspace-write"], {
        env,
        stdin: JSON.stringify({ name: "bash", arguments: { command: "true" } }) + "\n",
      });
      assert.equal(serve.code, 2);
      assert.match(serve.stderr, /needs bubblewrap/);
      assert.equal(serve.stdout, "");

      const config = join(place.root, "deft.yaml");
      await Deno.writeTextFile(config, "sandbox: read-only\n");
      const mcp = await runDeft(["mcp", "-w", ws], { env: { ...env, DEFT_CONFIG: config } });
      assert.equal(mcp.code, 2);
      assert.match(mcp.stderr, /needs bubblewrap/);

      // The editor runs inside bubblewrap too, so it is refused at start the same way.
      const edit = await runDeft([
        "tool",
        "str_replace_based_edit_tool",
        JSON.stringify({ command: "view", path: ws }),
        "-w",
        ws,
        "--sandbox",
        "workspace-write",
      ], { env });
      assert.equal(edit.code, 2);
      assert.match(edit.stderr, /needs bubblewrap/);
      assert.equal(edit.stdout, "");

      // A tool that touches nothing still works.
      const done = await runDeft(
        ["tool", "task_done", "{}", "-w", ws, "--sandbox", "workspace-write"],
        { env },
      );
      assert.equal(toolResult(done).success, true, done.stderr);
    } finally {
      await place.remove();
    }
  },
});
