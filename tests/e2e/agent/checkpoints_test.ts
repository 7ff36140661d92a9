import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { git } from "../../helpers/repo.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { markersIn, plantHostileConfig } from "../../helpers/hostile_git.ts";
import {
  changedBetween,
  checkpointHostPlace,
  recordCheckpointIn,
  restoreCheckpointIn,
} from "../../../src/agent/checkpoint_tree.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function modelArgs(mock: MockLLM): string[] {
  return ["-p", "openai_compatible", "-m", "mock", "--model-base-url", `${mock.url}/v1`, "-k", "k"];
}

/** Every file under `dir` but `.git`: its kind, mode and bytes (a link: its target). */
async function snapshot(dir: string, under = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const entry of Deno.readDir(`${dir}/${under}`)) {
    const rel = under ? `${under}/${entry.name}` : entry.name;
    if (rel === ".git") continue;
    const path = `${dir}/${rel}`;
    const info = await Deno.lstat(path);
    if (info.isSymlink) out[rel] = `link -> ${await Deno.readLink(path)}`;
    else if (info.isDirectory) Object.assign(out, await snapshot(dir, rel));
    else {
      out[rel] = `${(info.mode! & 0o777).toString(8)} ${
        JSON.stringify(new TextDecoder().decode(await Deno.readFile(path)))
      }`;
    }
  }
  return out;
}

/** The user's own git state: index bytes, the object files, refs. */
async function userGitState(repo: string): Promise<string> {
  const index = await Deno.readFile(`${repo}/.git/index`);
  const objects = await git(repo, "count-objects", "-v");
  const refs = await git(repo, "show-ref");
  return `${index.length}:${index.reduce((a, b) => (a * 31 + b) >>> 0, 7)}|${objects}|${refs}`;
}

async function makeRepo(): Promise<string> {
  const dir = await tempDirUntilExit("deft-ckpt-repo-");
  await Deno.writeTextFile(`${dir}/calc.py`, "def add(a, b):\n    return a - b\n");
  await Deno.writeTextFile(`${dir}/crlf.txt`, "alpha\r\nbeta\r\n");
  await Deno.writeTextFile(`${dir}/tabs.txt`, "\talpha\tbeta");
  await Deno.writeTextFile(`${dir}/run.sh`, "#!/bin/sh\necho alpha\n");
  await Deno.chmod(`${dir}/run.sh`, 0o755);
  await Deno.symlink("crlf.txt", `${dir}/link`);
  await Deno.writeTextFile(`${dir}/data.json`, '{"a": 1}\n');
  await Deno.writeTextFile(`${dir}/doomed.txt`, "to be deleted\n");
  await git(dir, "init", "-q");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
  // Not committed: a checkpoint holds untracked files too.
  await Deno.writeTextFile(`${dir}/notes.txt`, "mine\r\n");
  return dir;
}

Deno.test("checkpoints: three turns, rewind to turn 1 (files exact, conversation cut), the rewind undone, --rewind-to", async () => {
  const repo = await makeRepo();
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "a - b",
      new_str: "a + b",
    }]]),
    chatText("done one"),
    chatToolCalls([["bash", {
      command: "sed -i 's/alpha/ALPHA/' crlf.txt tabs.txt run.sh && echo new > created.txt && " +
        "rm doomed.txt && chmod -x run.sh && ln -sfn tabs.txt link",
    }]]),
    chatText("done two"),
    chatToolCalls([["json_edit_tool", {
      operation: "set",
      file_path: `${repo}/data.json`,
      json_path: "$.a",
      value: 2,
    }]]),
    chatText("done three"),
  ]);
  try {
    const initial = await snapshot(repo);
    const gitBefore = await userGitState(repo);
    const session = await runDeft(
      ["interactive", "-w", repo, "--approval", "never", ...modelArgs(mock)],
      { cwd: h, env, stdin: "fix calc\nshell things\njson things\n" },
    );
    assert.equal(session.code, 0, session.stderr);
    assert.equal(mock.requests.length, 6, session.stderr);
    const turn3 = await snapshot(repo);
    assert.ok(!("doomed.txt" in turn3) && "created.txt" in turn3, "the shell ran");
    assert.match(turn3["data.json"], /2/, "the JSON edit ran");
    const turn1 = { ...initial, "calc.py": initial["calc.py"].replace("a - b", "a + b") };

    const listed = await runDeft(["checkpoints", "-w", repo, "--json"], { cwd: h, env });
    assert.equal(listed.code, 0, listed.stderr);
    const { checkpoints } = JSON.parse(listed.stdout);
    assert.deepEqual(checkpoints.map((c: Json) => [c.turn, c.kind]), [
      [0, "start"],
      [1, "turn"],
      [2, "turn"],
      [3, "turn"],
    ]);
    assert.deepEqual(checkpoints.map((c: Json) => c.files_changed), [0, 1, 6, 1]);
    assert.equal(checkpoints[2].label, "shell things");
    const sessions = await runDeft(["sessions", "-w", repo], { cwd: h, env });
    assert.match(sessions.stdout, /CHECKPOINTS[\s\S]*\d{2}:\d{2}\s+4\s+\d+\s+\w+\s+fix calc/);

    // A file the user changed after the last turn: named, and nothing is overwritten.
    await Deno.writeTextFile(`${repo}/data.json`, '{"a": "mine"}\n');
    const refused = await runDeft(["rewind", "-w", repo, "--to", "1"], { cwd: h, env });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /changed since the last checkpoint, outside Deft: data\.json/);
    assert.equal(await Deno.readTextFile(`${repo}/data.json`), '{"a": "mine"}\n');
    assert.equal(await Deno.readTextFile(`${repo}/created.txt`), "new\n");
    await Deno.writeTextFile(`${repo}/data.json`, JSON.parse(turn3["data.json"].slice(4)));

    const back = await runDeft(["rewind", "-w", repo, "--to", "1", "--json"], { cwd: h, env });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(await snapshot(repo), turn1, "every file as it was after turn 1");
    const undo = await runDeft(["rewind", "-w", repo, "--to", "3"], { cwd: h, env });
    assert.equal(undo.code, 0, undo.stderr);
    assert.match(
      undo.stderr,
      /rewound the files and the conversation to checkpoint 3 \(json things\)/,
    );
    assert.deepEqual(await snapshot(repo), turn3, "rewinding the rewind restores turn 3");

    // Headless: go back to turn 1 and go on from there, the conversation cut after turn 1.
    mock.push(chatText("went on"));
    const onward = await runDeft(
      ["run", "go on", "--continue", "--rewind-to", "1", "-w", repo, "--json", ...modelArgs(mock)],
      { cwd: h, env },
    );
    assert.equal(onward.code, 0, onward.stderr);
    assert.deepEqual(await snapshot(repo), turn1);
    const sent: Json[] = mock.requests.at(-1)!.body.messages;
    assert.deepEqual(sent.map((m) => m.role), [
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
    assert.match(sent[1].content, /fix calc/);
    assert.match(sent[5].content, /go on/);
    assert.equal(sent[4].content, "done one");
    assert.ok(!JSON.stringify(sent).includes("shell things"), "turns 2 and 3 are cut");

    assert.equal(await userGitState(repo), gitBefore, "the user's git state is untouched");
  } finally {
    await mock.close();
  }
});

Deno.test("checkpoints: /rewind in interactive goes back to the start, files and conversation", async () => {
  const repo = await makeRepo();
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "echo one >> notes.txt && rm doomed.txt" }]]),
    chatText("done one"),
    chatToolCalls([["bash", { command: "echo two > created.txt && ln -sfn tabs.txt link" }]]),
    chatText("done two"),
    chatText("after the rewind"),
  ]);
  try {
    const initial = await snapshot(repo);
    const session = await runDeft(
      ["interactive", "-w", repo, "--approval", "never", ...modelArgs(mock)],
      { cwd: h, env, stdin: "first\nsecond\n/rewind 0 both\nwhat now\n" },
    );
    assert.equal(session.code, 0, session.stderr);
    assert.match(
      session.stderr + session.stdout,
      /rewound the files and the conversation to checkpoint 0 \(session start\)/,
    );
    assert.deepEqual(await snapshot(repo), initial, "back to the session's start");
    const sent: Json[] = mock.requests.at(-1)!.body.messages;
    assert.deepEqual(sent.map((m) => m.role), ["system", "user"]);
    assert.match(sent[1].content, /what now/);
  } finally {
    await mock.close();
  }
});

Deno.test("checkpoints: `checkpoints: false` in the config takes none", async () => {
  const repo = await makeRepo();
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  await Deno.writeTextFile(`${h}/deft.yaml`, "checkpoints: false\n");
  const mock = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  try {
    const r = await runDeft(
      [
        "run",
        "nothing",
        "-w",
        repo,
        "--json",
        "--config-file",
        `${h}/deft.yaml`,
        ...modelArgs(mock),
      ],
      { cwd: h, env },
    );
    assert.equal(r.code, 0, r.stderr);
    const t = JSON.parse(await Deno.readTextFile(JSON.parse(r.stdout).trajectory));
    assert.equal(t.checkpoints, undefined);
    assert.equal(
      await Deno.stat(`${h}/state/deft/checkpoints`).then(() => true, () => false),
      false,
    );
  } finally {
    await mock.close();
  }
});

Deno.test("checkpoints: a hostile repository's git config runs nothing while one is taken and restored", async () => {
  const repo = await makeRepo();
  await using markers = await tempDir("deft-markers-");
  await using store = await tempDir("deft-ckpt-store-");
  const planted = await new Deno.Command("sh", {
    args: ["-c", plantHostileConfig(markers.path)],
    cwd: repo,
  }).output();
  assert.ok(planted.success);
  await Deno.mkdir(`${store.path}/objects`);
  const place = await checkpointHostPlace(repo, store.path);
  const first = await recordCheckpointIn(place, store.path);
  await Deno.writeTextFile(`${repo}/crlf.txt`, "changed\r\n");
  await Deno.remove(`${repo}/doomed.txt`);
  const second = await recordCheckpointIn(place, store.path);
  assert.deepEqual(
    (await changedBetween(place, store.path, first.tree, second.tree)).sort(),
    ["crlf.txt", "doomed.txt"],
  );
  await restoreCheckpointIn(place, store.path, second.tree, first.tree);
  assert.equal(await Deno.readTextFile(`${repo}/crlf.txt`), "alpha\r\nbeta\r\n");
  assert.equal(await Deno.readTextFile(`${repo}/doomed.txt`), "to be deleted\n");
  assert.deepEqual(await markersIn(markers.path), [], "no planted program ran");
});

Deno.test("checkpoints: a .gitattributes with text/eol changes no byte a rewind restores", async () => {
  const repo = await tempDirUntilExit("deft-ckpt-attr-");
  await Deno.writeTextFile(`${repo}/.gitattributes`, "* text eol=lf\nlf.txt text eol=crlf\n");
  await Deno.writeTextFile(`${repo}/crlf.txt`, "alpha\r\nbeta\r\n");
  await Deno.writeTextFile(`${repo}/lf.txt`, "gamma\ndelta\n");
  await git(repo, "init", "-q");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
  await Deno.writeTextFile(`${repo}/new.txt`, "untracked\r\n");
  // Ignored through the repository's own exclude list: no checkpoint holds it, no rewind removes it.
  await Deno.writeTextFile(`${repo}/.git/info/exclude`, "scratch.log\n");
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: "printf 'one\\r\\ntwo\\n' > crlf.txt && printf 'three\\r\\n' > lf.txt && " +
        "printf 'x\\r\\n' > new.txt && echo log > scratch.log",
    }]]),
    chatText("done"),
  ]);
  try {
    const initial = await snapshot(repo);
    const session = await runDeft(
      ["interactive", "-w", repo, "--approval", "never", ...modelArgs(mock)],
      { cwd: h, env, stdin: "change line endings\n" },
    );
    assert.equal(session.code, 0, session.stderr);
    const turn1 = await snapshot(repo);
    assert.equal(turn1["crlf.txt"], `644 ${JSON.stringify("one\r\ntwo\n")}`, "the turn ran");
    const back = await runDeft(["rewind", "-w", repo, "--to", "0"], { cwd: h, env });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(
      await snapshot(repo),
      { ...initial, "scratch.log": turn1["scratch.log"] },
      "CRLF and LF bytes come back exactly; the ignored file stays",
    );
    const undo = await runDeft(["rewind", "-w", repo, "--to", "1"], { cwd: h, env });
    assert.equal(undo.code, 0, undo.stderr);
    assert.deepEqual(await snapshot(repo), turn1, "and so do turn 1's");
  } finally {
    await mock.close();
  }
});

Deno.test("checkpoints: a hostile repository's config and hooks run nothing in a whole session and its rewind", async () => {
  const repo = await makeRepo();
  await using markers = await tempDir("deft-markers-");
  const planted = await new Deno.Command("sh", {
    args: ["-c", plantHostileConfig(markers.path)],
    cwd: repo,
  }).output();
  assert.ok(planted.success);
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "a - b",
      new_str: "a + b",
    }]]),
    chatText("done"),
  ]);
  try {
    const initial = await snapshot(repo);
    const session = await runDeft(
      // No sandbox: a planted program could write its marker outside the workspace.
      ["interactive", "-w", repo, "--approval", "never", "--sandbox", "none", ...modelArgs(mock)],
      { cwd: h, env, stdin: "fix calc\n" },
    );
    assert.equal(session.code, 0, session.stderr);
    assert.match(await Deno.readTextFile(`${repo}/calc.py`), /a \+ b/, "the turn ran");
    const back = await runDeft(["rewind", "-w", repo, "--to", "0"], { cwd: h, env });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(await snapshot(repo), initial);
    assert.deepEqual(await markersIn(markers.path), [], "no planted program ran");
  } finally {
    await mock.close();
  }
});
