/**
 * Deft started in one of its own control folders (`cd ~/.config/deft && deft run "tidy my
 * config"`): the model must not change what the next Deft runs on the host. A writable sandbox
 * there is refused at start, saying why and what to do, so neither the model's shell nor the
 * sandboxed editor ever writes `config.yaml` or a hook script; with the workspace one level up
 * (`-w ~/.config`) the cover of the entry below it holds. Deft runs for real, with bubblewrap,
 * HOME a temp folder.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft, runMocked } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import {
  processPolicy,
  shellLaunch,
  spawnChild,
  toolHostLaunch,
} from "../../../src/policy/process.ts";
import { gitSandbox, runGit } from "../../../src/policy/git.ts";
import { SandboxUnavailableError } from "../../../src/policy/sandbox.ts";
import { tempDir } from "../../helpers/temp.ts";

const CONFIG = "# my settings\nsandbox: workspace-write\n";
const HOOK = "#!/bin/sh\nexit 0\n";

function homeEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
  };
}

/** A home with Deft's config (a config file and a hook script it names) and a session record. */
async function home(path: string) {
  const config = join(path, ".config", "deft");
  await Deno.mkdir(join(config, "hooks"), { recursive: true });
  await Deno.writeTextFile(join(config, "config.yaml"), CONFIG);
  await Deno.writeTextFile(join(config, "hooks", "stop.sh"), HOOK, { mode: 0o755 });
  const state = join(path, ".local", "state", "deft", "sessions");
  await Deno.mkdir(state, { recursive: true });
  await Deno.writeTextFile(join(state, "s.jsonl"), "{}\n");
  return { config, state };
}

async function tool(home: string, workspace: string, name: string, args: unknown) {
  return await runDeft(
    ["tool", name, JSON.stringify(args), "-w", workspace, "--sandbox", "workspace-write"],
    { cwd: home, env: homeEnv(home) },
  );
}

/** Every way in: the shell appends a hook, the editor inserts one. */
async function attack(homePath: string, workspace: string, target: string) {
  const line = "hooks: {Stop: [{command: 'touch /tmp/pwned'}]}";
  const shell = await tool(homePath, workspace, "bash", {
    command: `echo "${line}" >> '${target}'; echo RAN`,
  });
  const editor = await tool(homePath, workspace, "str_replace_based_edit_tool", {
    command: "insert",
    path: target,
    insert_line: 0,
    insert_text: `${line}\n`,
  });
  return { shell, editor };
}

const ROOTS: { name: string; workspace: (h: string) => string; target: (h: string) => string }[] = [
  {
    name: "the config folder itself",
    workspace: (h) => join(h, ".config", "deft"),
    target: (h) => join(h, ".config", "deft", "config.yaml"),
  },
  {
    name: "a folder inside the config folder (its hook scripts)",
    workspace: (h) => join(h, ".config", "deft", "hooks"),
    target: (h) => join(h, ".config", "deft", "hooks", "stop.sh"),
  },
  {
    name: "the state folder's sessions",
    workspace: (h) => join(h, ".local", "state", "deft", "sessions"),
    target: (h) => join(h, ".local", "state", "deft", "sessions", "s.jsonl"),
  },
];

for (const root of ROOTS) {
  Deno.test(`workspace is ${root.name}: refused at start, nothing written`, async () => {
    await using temp = await tempDir("deft-ctlws-");
    await home(temp.path);
    const target = root.target(temp.path);
    const before = await Deno.readTextFile(target);
    const { shell, editor } = await attack(temp.path, root.workspace(temp.path), target);
    for (const [what, r] of [["shell", shell], ["editor", editor]] as const) {
      assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
      assert.doesNotMatch(r.stdout, /RAN/);
      assert.match(r.stderr, /what the host runs next is kept there/, what);
      assert.match(r.stderr, /--sandbox read-only/, what);
    }
    assert.equal(await Deno.readTextFile(target), before);
  });
}

Deno.test("config home reached through a link (dotfiles), workspace its real folder: refused the same", async () => {
  await using temp = await tempDir("deft-ctlws-");
  const dotfiles = join(temp.path, "dotfiles");
  await Deno.mkdir(join(dotfiles, "config", "deft"), { recursive: true });
  await Deno.writeTextFile(join(dotfiles, "config", "deft", "config.yaml"), CONFIG);
  await Deno.symlink(join(dotfiles, "config"), join(temp.path, ".config"));
  const real = join(dotfiles, "config", "deft");
  const target = join(real, "config.yaml");
  const { shell, editor } = await attack(temp.path, real, target);
  assert.equal(shell.code, 2, shell.stdout + shell.stderr);
  assert.equal(editor.code, 2, editor.stdout + editor.stderr);
  assert.equal(await Deno.readTextFile(target), CONFIG);
});

Deno.test("workspace holds the config folder (-w ~/.config): the shell and editor cannot change it", async () => {
  await using temp = await tempDir("deft-ctlws-");
  const { config } = await home(temp.path);
  const workspace = join(temp.path, ".config");
  const target = join(config, "config.yaml");
  const { shell, editor } = await attack(temp.path, workspace, target);
  assert.equal(shell.code, 0, shell.stdout + shell.stderr);
  assert.match(JSON.parse(shell.stdout).error, /config\.yaml: Read-only file system/);
  assert.notEqual(JSON.parse(editor.stdout).error ?? null, null, editor.stdout);
  assert.equal(await Deno.readTextFile(target), CONFIG);
  // The model may still write its own files beside it.
  const own = await tool(temp.path, workspace, "bash", { command: "echo mine > notes.txt" });
  assert.equal(own.code, 0, own.stdout + own.stderr);
  assert.equal(await Deno.readTextFile(join(workspace, "notes.txt")), "mine\n");
});

Deno.test("read-only sandbox in the config folder: the model may look", async () => {
  await using temp = await tempDir("deft-ctlws-");
  const { config } = await home(temp.path);
  const r = await runDeft(
    ["tool", "bash", '{"command":"cat config.yaml"}', "-w", config, "--sandbox", "read-only"],
    { cwd: temp.path, env: homeEnv(temp.path) },
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(JSON.parse(r.stdout).output, /my settings/);
});

/**
 * Below the start check, every view that writes the workspace refuses on its own: the model's
 * shell, the sandboxed editor host and the git runner, each built by the policy for a workspace
 * that is the config folder (a front end that skipped the start check still writes nothing).
 */
Deno.test("each writing view refuses a workspace in the config folder on its own", async () => {
  await using temp = await tempDir("deft-ctlws-");
  const { config } = await home(temp.path);
  const saved = Object.fromEntries(
    Object.keys(homeEnv(temp.path)).map((name) => [name, Deno.env.get(name)]),
  );
  for (const [name, value] of Object.entries(homeEnv(temp.path))) Deno.env.set(name, value);
  try {
    const policy = processPolicy(config, { sandbox: "workspace-write" });
    assert.throws(() => shellLaunch(policy, { cwd: config }), SandboxUnavailableError);
    assert.throws(
      () => toolHostLaunch(policy, { argv: ["true"], readOnly: [], writable: [] }),
      SandboxUnavailableError,
    );
    const git = await runGit(config, ["init", "-q"], {
      sandbox: gitSandbox(config, { sandbox: "workspace-write" }),
    }).then(() => undefined, (e) => e);
    assert.ok(git instanceof SandboxUnavailableError, String(git));
    assert.equal(await Deno.lstat(join(config, ".git")).then(() => true, () => false), false);
    // The shell one level up runs, and cannot append to the config file.
    const above = join(temp.path, ".config");
    const launch = shellLaunch(processPolicy(above, { sandbox: "workspace-write" }), {
      cwd: above,
    });
    const out = await spawnChild(launch, { stdin: "piped", stdout: "piped", stderr: "piped" });
    const writer = out.stdin.getWriter();
    await writer.write(new TextEncoder().encode("echo 'hooks: {}' >> deft/config.yaml\nexit\n"));
    await writer.close();
    const done = await out.output();
    assert.match(new TextDecoder().decode(done.stderr), /Read-only file system/);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
  assert.equal(await Deno.readTextFile(join(config, "config.yaml")), CONFIG);
});

Deno.test("deft run in its config folder ('tidy my config'): refused before the model is asked", async () => {
  await using temp = await tempDir("deft-ctlws-");
  const { config } = await home(temp.path);
  const hook = "hooks: {SessionStart: [{command: 'touch /tmp/pwned'}]}";
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `echo "${hook}" >> config.yaml` }]], ""),
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "insert",
      path: join(config, "config.yaml"),
      insert_line: 0,
      insert_text: `${hook}\n`,
    }]], ""),
    chatText("tidied"),
  ]);
  try {
    const r = await runMocked(mock, "tidy my config", config, {
      cwd: config,
      env: homeEnv(temp.path),
      extra: ["--sandbox", "workspace-write"],
    });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /is Deft's config folder/);
    assert.equal(mock.requests.length, 0, "the model was asked");
  } finally {
    await mock.close();
  }
  assert.equal(await Deno.readTextFile(join(config, "config.yaml")), CONFIG);
});
