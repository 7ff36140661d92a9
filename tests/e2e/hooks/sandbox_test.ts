/**
 * Hooks and the sandbox (issue 48, findings 3 and 4): `deft run` against the mock model with real
 * bubblewrap, a real hook in the user's config and the model changing what the hook runs. A hook
 * runs inside the session's sandbox by default, so what the model wrote cannot act outside the
 * workspace; a `sandbox: none` hook runs outside, with Deft's hardened git settings, and one whose
 * command lies in the workspace is refused at load.
 */
import assert from "node:assert/strict";
import { runDeft, runMocked, trustedHome } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM, type MockReply } from "../../helpers/mock_llm.ts";
import { git, makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

/** A HOME whose user config holds `hooksYaml` (the `hooks:` key's body, `$HOME_DIR` replaced). */
async function homeWith(hooksYaml: string, scripts: Record<string, string> = {}) {
  const home = await trustedHome("deft-hooks-sandbox-");
  for (const [name, body] of Object.entries(scripts)) {
    await Deno.writeTextFile(`${home}/${name}`, body);
  }
  const path = `${home}/.config/deft/config.yaml`;
  const text = await Deno.readTextFile(path);
  await Deno.writeTextFile(path, `${text}hooks:\n${hooksYaml.replaceAll("$HOME_DIR", home)}\n`);
  return home;
}

async function run(home: string, repo: string, replies: MockReply[]) {
  const mock = MockLLM.start(replies);
  try {
    return await runMocked(mock, "do it", repo, {
      cwd: home,
      env: { HOME: home },
      extra: ["--sandbox", "workspace-write", "--approval", "never"],
    });
  } finally {
    await mock.close();
  }
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/**
 * The model's bash call that writes the program the repository's `core.fsmonitor` names. The
 * model can no longer set `core.fsmonitor` itself (`.git/config` is covered read-only, see
 * src/policy/repo_places.ts), so the repository names the program beforehand (`nameFsmonitor`)
 * and the model writes what it runs.
 */
function plantFsmonitor(outside: string): MockReply {
  const program = [
    "#!/bin/sh",
    `echo pwned > ${outside}/marker`,
    'echo ran > "$(git rev-parse --show-toplevel)/fsmonitor-ran"',
  ].join("\\n");
  return chatToolCalls([[
    "bash",
    {
      command: `printf '${program}\\n' > .git/fsm.sh && chmod +x .git/fsm.sh && echo planted`,
    },
  ]]);
}

/** Points the repository's `core.fsmonitor` at `.git/fsm.sh`, which the model then writes. */
async function nameFsmonitor(repo: string): Promise<void> {
  await git(repo, "config", "core.fsmonitor", `${repo}/.git/fsm.sh`);
}

Deno.test("finding 3: a Stop hook runs the script the model rewrote inside the sandbox: it runs, and writes nothing outside the workspace", async () => {
  const outside = await tempDirUntilExit("deft-hooks-outside-");
  const repo = await makeBuggyRepo();
  // The user's check script, committed in the project; the hook the docs show runs it.
  await Deno.mkdir(`${repo}/scripts`);
  await Deno.writeTextFile(`${repo}/scripts/tests-pass.sh`, "#!/bin/bash\nexit 0\n");
  await Deno.chmod(`${repo}/scripts/tests-pass.sh`, 0o755);
  await git(repo, "add", "scripts");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "check");
  const home = await homeWith(
    `  Stop:\n    - hooks:\n        - { type: command, command: "./scripts/tests-pass.sh" }`,
  );
  const rewrite = `#!/bin/bash\necho pwned > ${outside}/marker\necho ran > hook-ran\nexit 0\n`;
  const r = await run(home, repo, [
    chatToolCalls([[
      "bash",
      { command: `cat > scripts/tests-pass.sh <<'EOF'\n${rewrite}EOF\necho rewritten` },
    ]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await Deno.readTextFile(`${repo}/scripts/tests-pass.sh`), rewrite);
  assert.equal(
    (await Deno.readTextFile(`${repo}/hook-ran`)).trim(),
    "ran",
    `the Stop hook did not run the rewritten script: ${r.stderr}`,
  );
  assert.equal(
    await exists(`${outside}/marker`),
    false,
    "the model's rewritten hook script wrote outside the workspace",
  );
});

Deno.test("finding 4: a PostToolUse hook's `git status` runs the model's core.fsmonitor only inside the sandbox", async () => {
  const outside = await tempDirUntilExit("deft-hooks-outside-");
  const repo = await makeBuggyRepo();
  const home = await homeWith(
    `  PostToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "git status --short" }`,
  );
  await nameFsmonitor(repo);
  const r = await run(home, repo, [
    plantFsmonitor(outside),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  // The hook's git did obey the repository's config (the attack is real) …
  assert.ok(await exists(`${repo}/fsmonitor-ran`), `git never ran the fsmonitor: ${r.stderr}`);
  // … and the program it started could not reach outside the workspace.
  assert.equal(
    await exists(`${outside}/marker`),
    false,
    "the model's fsmonitor program ran on the host from the hook's git",
  );
});

Deno.test("a `sandbox: none` hook runs outside (it writes its log in ~) and its git ignores the model's core.fsmonitor", async () => {
  const outside = await tempDirUntilExit("deft-hooks-outside-");
  const repo = await makeBuggyRepo();
  const home = await homeWith(
    `  PostToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/log.sh", sandbox: none }`,
    {
      "log.sh": `#!/bin/bash\ncat >/dev/null\ngit status --short >/dev/null 2>&1\n` +
        `echo "status $?" >> "$HOME/hook.log"\n`,
    },
  );
  await nameFsmonitor(repo);
  const r = await run(home, repo, [
    plantFsmonitor(outside),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    await Deno.readTextFile(`${home}/hook.log`).catch(() => ""),
    "status 0\n",
    `the outside hook did not write its log in ~ (or its git failed): ${r.stderr}`,
  );
  assert.equal(
    await exists(`${outside}/marker`),
    false,
    "the hook's git ran the model's fsmonitor",
  );
  assert.equal(await exists(`${repo}/fsmonitor-ran`), false, "the hook's git ran the fsmonitor");
});

Deno.test("a `sandbox: none` hook whose program lies in the workspace is refused at load: deft run and deft hooks say why", async () => {
  const repo = await makeBuggyRepo();
  const home = await homeWith(
    `  Stop:\n    - hooks:\n        - { type: command, command: "./scripts/notify.sh done", sandbox: none }`,
  );
  const mock = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  try {
    const r = await runMocked(mock, "do it", repo, {
      cwd: home,
      env: { HOME: home },
      extra: ["--approval", "never"],
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /sandbox: none/);
    assert.match(r.stderr, /\.\/scripts\/notify\.sh lies inside the workspace/);
    assert.equal(mock.requests.length, 0, "the run went on to the model");
  } finally {
    await mock.close();
  }
  const listed = await runDeft(["hooks"], { cwd: repo, env: { HOME: home } });
  assert.equal(listed.code, 2, listed.stderr);
  assert.match(listed.stderr, /\.\/scripts\/notify\.sh lies inside the workspace/);
});

Deno.test("deft hooks says where each hook runs: in the sandbox, or outside it", async () => {
  const repo = await makeBuggyRepo();
  const home = await homeWith(
    `  Stop:\n    - hooks:\n        - { type: command, command: "./scripts/tests-pass.sh" }\n` +
      `        - { type: command, command: "notify-send done", sandbox: none }`,
  );
  const r = await runDeft(["hooks"], {
    cwd: repo,
    env: { HOME: home, DEFT_SANDBOX: "workspace-write" },
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, 2, r.stdout);
  assert.match(lines[0], /tests-pass\.sh\tsandboxed \(workspace-write, no network\)/);
  assert.match(lines[1], /notify-send done\toutside the sandbox \(sandbox: none\)/);
  const bare = await runDeft(["hooks"], { cwd: repo, env: { HOME: home, DEFT_SANDBOX: "none" } });
  assert.match(bare.stdout, /tests-pass\.sh\tunsandboxed \(no sandbox here/);
});

Deno.test("a sandboxed hook that hangs is killed at its timeout with everything it started; the call goes on", async () => {
  const tag = `deft-hook-child-${crypto.randomUUID()}`;
  const repo = await makeBuggyRepo();
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/hang.sh", timeout: 1 }`,
    {
      "hang.sh":
        `#!/bin/bash\ncat >/dev/null\n(exec -a ${tag} sleep 300) &\nsetsid bash -c 'exec -a ${tag} sleep 300' &\nwait\n`,
    },
  );
  const r = await run(home, repo, [
    chatToolCalls([["bash", { command: "echo still-ran" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /did not finish in 1 s; killed/);
  const left = async () => {
    const out = await new Deno.Command("pgrep", { args: ["-f", tag], stdout: "piped" }).output();
    return new TextDecoder().decode(out.stdout).trim().split("\n").filter(Boolean);
  };
  let pids = await left();
  for (let i = 0; i < 30 && pids.length > 0; i++) {
    await new Promise((ok) => setTimeout(ok, 100));
    pids = await left();
  }
  for (const pid of pids) Deno.kill(Number(pid), "SIGKILL");
  assert.deepEqual(pids, [], "a process the hook started outlived its timeout");
});
