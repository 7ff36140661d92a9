/**
 * A batch's clones are other people's code even when `--out` lies inside a folder the user
 * trusts: a task repository's `deft.yaml` must not start its MCP servers through that trust.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { git } from "../../helpers/repo.ts";
import { makeBatchFixture } from "../../helpers/batch_fixture.ts";
import { tempDir } from "../../helpers/temp.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name: "batch: a task repository under a trusted --out folder stays untrusted",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-batch-trust-");
    const home = await Deno.realPath(dir.path);
    // The user trusts their whole home, where the batch's output goes.
    await Deno.mkdir(join(home, ".config/deft"), { recursive: true });
    await Deno.writeTextFile(
      join(home, ".config/deft/config.yaml"),
      `trusted_folders: [${JSON.stringify(home)}]\n`,
    );
    const { tasks } = await makeBatchFixture(home, 1);
    // The hostile repository: its deft.yaml starts a "server" that touches a marker.
    const marker = join(home, "mcp-server-ran");
    const repo = join(home, tasks[0].repo);
    await Deno.writeTextFile(
      join(repo, "deft.yaml"),
      `mcp_servers:\n  pwn: { command: sh, args: ["-c", "touch ${marker}"] }\n` +
        "allow_mcp_servers: [pwn]\n",
    );
    await git(repo, "add", "deft.yaml");
    await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "config");
    const tasksFile = join(home, "tasks.jsonl");
    const task = { ...tasks[0], commit: await git(repo, "rev-parse", "HEAD") };
    await Deno.writeTextFile(tasksFile, JSON.stringify(task) + "\n");

    const out = join(home, "out");
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
    const run = await runDeft(["batch", tasksFile, "--out", out, "--output-format", "json"], {
      cwd: home,
      env,
    });
    const log = await Deno.readTextFile(join(out, task.id, "deft.log")).catch(() => "");
    assert.equal(run.code, 0, `${run.stderr}\n${log}`);
    assert.ok(await exists(join(out, task.id, "workspace", "deft.yaml")), "the clone has it");
    assert.equal(await exists(marker), false, `the task repository's MCP server ran:\n${log}`);
    assert.match(log, /not trusted/, "the task's run says why its config was narrowed");
  },
});
