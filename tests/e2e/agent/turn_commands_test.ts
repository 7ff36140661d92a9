/**
 * `/undo`, `/compact`, `/init` and `/cost` in `deft interactive`, driven through piped standard
 * input against the mock model, as a user would type them.
 */
import assert from "node:assert/strict";
import { interactiveOnStdin, trustedHome } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";
import { join } from "node:path";

/** `deft interactive` in `repo` with `input` typed, against `mock`. */
async function interactive(mock: MockLLM, repo: string, input: string, model?: string) {
  const home = await trustedHome();
  const ran = await interactiveOnStdin(repo, mock, input, {
    args: ["--approval", "never"],
    model,
    cwd: home,
    env: { HOME: home },
  });
  return { ...ran, home };
}

// CRLF line ends, tabs, a trailing space and no final newline: undo must give back these bytes.
const ORIGINAL = "def add(a, b):\r\n\treturn a - b \r\n\r\n# end\t";

Deno.test("/undo restores the last turn's edits byte for byte and removes the files it created", async () => {
  const repo = await makeBuggyRepo();
  await Deno.writeTextFile(`${repo}/calc.py`, ORIGINAL);
  const mock = MockLLM.start([
    // Turn 1: one edit that /undo must leave alone (it is not the last turn).
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "create",
      path: `${repo}/first.txt`,
      file_text: "from turn one\n",
    }]]),
    chatText("made first.txt"),
    // Turn 2: two edits of calc.py, a new file in a new folder, a bash call.
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b ",
      new_str: "return a + b",
    }]]),
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "insert",
      path: `${repo}/calc.py`,
      insert_line: 0,
      new_str: "# fixed\r",
    }]]),
    chatToolCalls([
      ["str_replace_based_edit_tool", {
        command: "create",
        path: `${repo}/pkg/deep/new.py`,
        file_text: "x = 1\n",
      }],
      ["bash", { command: "true" }],
    ]),
    chatText("fixed add"),
  ]);
  try {
    const r = await interactive(
      mock,
      repo,
      "make first\nfix add\n/undo\n/undo\n/cost\nexit\n",
      "gpt-4o",
    );
    assert.equal(r.code, 0, r.stderr);
    const restored = await Deno.readFile(`${repo}/calc.py`);
    assert.deepEqual(restored, new TextEncoder().encode(ORIGINAL));
    assert.equal(await exists(`${repo}/pkg`), false, "the created file and its folders are gone");
    assert.equal(await Deno.readTextFile(`${repo}/first.txt`), "from turn one\n");
    assert.match(r.stderr, /removed .*pkg\/deep\/new\.py \(created in that turn\)/);
    assert.equal(r.stderr.match(/reverted an edit of .*calc\.py/g)?.length, 2, r.stderr);
    assert.match(r.stderr, /not undone \(no edit history\): 1 bash call\(s\)/);
    // What /undo cannot take back, /rewind can: it says so.
    assert.match(r.stderr, /\/rewind goes back to the turn's checkpoint, their changes included/);
    assert.match(r.stderr, /nothing to undo: the last turn's edits were already undone/);
    // /cost: a line per turn, and a total that is their sum.
    const turnCosts = [...r.stderr.matchAll(/^turn \d+\s+\d+ in.*\$(\d+\.\d{4})\s+gpt-4o$/gm)]
      .map((m) => Number(m[1]));
    assert.equal(turnCosts.length, 2, r.stderr);
    const total = /^total\s+(\d+) in.*, (\d+) out\s+\$(\d+\.\d{4})$/m.exec(r.stderr);
    assert.ok(total, r.stderr);
    assert.ok(Math.abs(Number(total[3]) - (turnCosts[0] + turnCosts[1])) < 0.00015);
    assert.ok(Number(total[3]) > 0);
    // No model call for the commands.
    assert.equal(mock.requests.length, 6);
  } finally {
    await mock.close();
  }
});

Deno.test("/undo refuses to overwrite a file changed since the turn, and says so", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]]),
    chatToolCalls([["bash", { command: `printf '# later\\n' >> ${repo}/calc.py` }]]),
    chatText("done"),
  ]);
  try {
    const r = await interactive(mock, repo, "/undo\nfix\n/undo\nexit\n");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^nothing to undo\.$/m);
    assert.match(r.stderr, /✗ .*calc\.py: Cannot undo the last edit .* has changed since/);
    assert.equal(
      await Deno.readTextFile(`${repo}/calc.py`),
      "def add(a, b):\n    return a + b\n# later\n",
    );
  } finally {
    await mock.close();
  }
});

Deno.test("/compact replaces the conversation with the model's summary", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "echo step" }]]),
    chatText("first answer"),
    chatText("SUMMARY: the user asked for a first thing; it was answered."),
    chatText("second answer"),
  ]);
  try {
    const r = await interactive(mock, repo, "/compact\nfirst\n/compact\nsecond\n/cost\nexit\n");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /nothing to compact: the conversation is empty/);
    assert.match(
      r.stderr,
      /compacted the conversation: 5 → 3 message\(s\), about \d+ → \d+ tokens/,
    );
    // The summariser saw the conversation as a transcript, with no tools offered.
    const asked = mock.requests[2].body;
    assert.equal(asked.tools, undefined);
    assert.match(asked.messages[1].content, /\[tool call: bash \{"command":"echo step"\}\]/);
    assert.match(asked.messages[1].content, /first answer/);
    // The next turn goes on from the summary alone.
    const next = mock.requests[3].body.messages;
    assert.equal(next.length, 4, JSON.stringify(next));
    assert.equal(next[0].role, "system");
    assert.match(next[1].content, /compacted by \/compact[\s\S]*SUMMARY: the user asked/);
    assert.equal(next[3].content, "second");
    assert.doesNotMatch(JSON.stringify(next), /echo step/);
    assert.match(r.stderr, /^\/compact\s+50 in, 10 out/m);
    assert.match(r.stdout, /second answer/);
    // The turn after /compact is a new trajectory going on from the first: resuming it rebuilds
    // the compacted conversation.
    const dir = `${r.home}/.local/state/deft/trajectories`;
    const files = [...Deno.readDirSync(dir)].map((e) =>
      JSON.parse(Deno.readTextFileSync(`${dir}/${e.name}`))
    );
    assert.equal(files.length, 2);
    const [older, newer] = files[0].resumed_from ? [files[1], files[0]] : files;
    assert.equal(newer.resumed_from.session_id, older.session_id);
    const input = newer.llm_interactions[0].input_messages;
    assert.deepEqual(input.map((m: { role: string }) => m.role), [
      "system",
      "user",
      "assistant",
      "user",
    ]);
    assert.match(input[1].content, /compacted by \/compact/);
  } finally {
    await mock.close();
  }
});

Deno.test("/init drafts AGENTS.md, or a draft beside an existing one it never changes", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "create",
      path: `${repo}/AGENTS.md`,
      file_text: "# calc\nRun `python3 check.py`.\n",
    }]]),
    chatText("wrote AGENTS.md"),
    // A disobedient model: it edits AGENTS.md as well as writing the draft.
    chatToolCalls([
      ["str_replace_based_edit_tool", {
        command: "str_replace",
        path: `${repo}/AGENTS.md`,
        old_str: "# calc",
        new_str: "# hijacked",
      }],
      ["str_replace_based_edit_tool", {
        command: "create",
        path: `${repo}/AGENTS.draft.md`,
        file_text: "# calc (draft)\n",
      }],
    ]),
    chatText("wrote the draft"),
  ]);
  try {
    const r = await interactive(mock, repo, "/init\n/init\nexit\n");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      await Deno.readTextFile(`${repo}/AGENTS.md`),
      "# calc\nRun `python3 check.py`.\n",
      "AGENTS.md is put back after the second /init",
    );
    assert.equal(await Deno.readTextFile(`${repo}/AGENTS.draft.md`), "# calc (draft)\n");
    assert.match(r.stderr, /drafted .*\/AGENTS\.md: review it/);
    assert.match(r.stderr, /the model changed .*AGENTS\.md: it is put back as it was/);
    assert.match(r.stderr, /drafted .*\/AGENTS\.draft\.md: compare it with AGENTS\.md/);
    const first = String(mock.requests[0].body.messages[1].content);
    assert.ok(first.includes(`to the file ${repo}/AGENTS.md `), first);
    assert.doesNotMatch(first, /already exists/);
    const second = String(mock.requests[2].body.messages[1].content);
    assert.ok(second.includes(`to the file ${repo}/AGENTS.draft.md `), second);
    assert.match(second, /AGENTS\.md already exists: read it, but do not change it/);
  } finally {
    await mock.close();
  }
});

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/**
 * A repository with AGENTS.md (so /init drafts beside it), an outside folder holding a marker file
 * that stands for the user's `~/.bashrc` or `~/.ssh/id_ed25519`, and a trusted home; all removed
 * afterwards.
 */
async function initPlaces() {
  const repo = await makeBuggyRepo();
  const outside = await tempDir("deft-outside-");
  const marker = join(outside.path, "id_ed25519");
  await Deno.writeTextFile(marker, SECRET);
  return {
    repo,
    marker,
    async [Symbol.asyncDispose]() {
      await Deno.remove(repo, { recursive: true }).catch(() => {});
      await outside.remove();
    },
  };
}

const SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- marker-c0ffee -----END-----\n";
const AGENTS = "# calc\nRun `python3 check.py`.\n";

/** Every regular file's content under `dir` (the repository's `.git` included). */
async function everything(dir: string): Promise<string> {
  let all = "";
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    const info = await Deno.lstat(path);
    if (info.isFile) all += new TextDecoder().decode(await Deno.readFile(path));
    else if (info.isDirectory) all += await everything(path);
  }
  return all;
}

/** `/init` in `repo`, the model's turn being `calls` and then a line of text. */
async function init(repo: string, calls: [string, unknown][]) {
  const mock = MockLLM.start([
    chatToolCalls([
      ...calls,
      ["str_replace_based_edit_tool", {
        command: "create",
        path: `${repo}/AGENTS.draft.md`,
        file_text: "# calc (draft)\n",
      }],
    ]),
    chatText("wrote the draft"),
  ]);
  try {
    const r = await interactive(mock, repo, "/init\nexit\n");
    await Deno.remove(r.home, { recursive: true });
    return { ...r, requests: JSON.stringify(mock.requests) };
  } finally {
    await mock.close();
  }
}

Deno.test("/init: the model swaps AGENTS.md for a symlink to an outside file; Deft never writes through it", async () => {
  await using p = await initPlaces();
  await Deno.writeTextFile(`${p.repo}/AGENTS.md`, AGENTS);
  const r = await init(p.repo, [["bash", {
    command: `rm AGENTS.md && ln -s ${p.marker} AGENTS.md`,
  }]]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await Deno.readTextFile(p.marker), SECRET, "the outside file was written");
  const info = await Deno.lstat(`${p.repo}/AGENTS.md`);
  assert.ok(info.isFile, "AGENTS.md is a regular file again, not the link");
  assert.equal(await Deno.readTextFile(`${p.repo}/AGENTS.md`), AGENTS);
  assert.match(
    r.stderr,
    /the model replaced .*AGENTS\.md by a symbolic link to .*id_ed25519: it is put back as it was \(replacing the link; nothing was written through it\)/,
  );
});

Deno.test("/init: a repository's AGENTS.md symlink to an outside secret is never read, copied in, or sent", async () => {
  await using p = await initPlaces();
  await Deno.symlink(p.marker, `${p.repo}/AGENTS.md`);
  const r = await init(p.repo, [["bash", {
    command: "rm AGENTS.md && echo 'the model was here' > AGENTS.md",
  }]]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await Deno.readLink(`${p.repo}/AGENTS.md`), p.marker, "the link itself is back");
  await Deno.remove(`${p.repo}/AGENTS.md`);
  assert.ok(!(await everything(p.repo)).includes("marker-c0ffee"), "the secret was copied in");
  assert.ok(!r.requests.includes("marker-c0ffee"), "the secret reached the model");
  assert.equal(await Deno.readTextFile(p.marker), SECRET);
  assert.match(
    r.stderr,
    /AGENTS\.md is a symbolic link to .*id_ed25519: Deft does not read through it/,
  );
  assert.match(
    r.stderr,
    /the model changed .*AGENTS\.md: the symbolic link to .*id_ed25519 is put back as it was \(its target was neither read nor written\)/,
  );
});

Deno.test("/init restores an AGENTS.md the model deleted, as it restores one it changed", async () => {
  await using p = await initPlaces();
  await Deno.writeTextFile(`${p.repo}/AGENTS.md`, AGENTS);
  const r = await init(p.repo, [["bash", { command: "rm AGENTS.md" }]]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await Deno.readTextFile(`${p.repo}/AGENTS.md`), AGENTS);
  assert.match(r.stderr, /the model deleted .*AGENTS\.md: it is put back as it was\./);
  assert.match(r.stderr, /drafted .*\/AGENTS\.draft\.md: compare it with AGENTS\.md/);
});

Deno.test("/undo after /compact still reverts the last turn's edits", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]]),
    chatText("fixed"),
    chatText("SUMMARY: add was fixed."),
  ]);
  try {
    const before = await Deno.readTextFile(`${repo}/calc.py`);
    const r = await interactive(mock, repo, "fix add\n/compact\n/undo\nexit\n");
    await Deno.remove(r.home, { recursive: true });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /compacted the conversation/);
    assert.equal(await Deno.readTextFile(`${repo}/calc.py`), before, "/undo reverted nothing");
    assert.match(r.stderr, /reverted an edit of .*calc\.py/);
  } finally {
    await mock.close();
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("/compact: an empty summary from the model leaves the conversation as it was", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatText("first answer"),
    chatText("   \n"),
    chatText("second answer"),
  ]);
  try {
    const r = await interactive(mock, repo, "first\n/compact\nsecond\nexit\n");
    await Deno.remove(r.home, { recursive: true });
    assert.equal(r.code, 0, r.stderr);
    // The next turn still carries the whole conversation, not an empty summary.
    const next = mock.requests[2].body.messages as { role: string; content: string }[];
    assert.deepEqual(next.map((m) => m.role), ["system", "user", "assistant", "user"]);
    assert.match(next[1].content, /\[Task\]:\nfirst\n/);
    assert.equal(next[2].content, "first answer");
    assert.equal(next[3].content, "second");
    assert.doesNotMatch(JSON.stringify(next), /compacted by \/compact/);
    assert.match(r.stderr, /the model's summary was empty: the conversation is unchanged/);
  } finally {
    await mock.close();
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("/init: a new AGENTS.md the model makes a symlink to an outside file is left unread, and said so", async () => {
  await using p = await initPlaces();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `ln -s ${p.marker} AGENTS.md` }]]),
    chatText("wrote AGENTS.md"),
  ]);
  try {
    const r = await interactive(mock, p.repo, "/init\nexit\n");
    await Deno.remove(r.home, { recursive: true });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /the model made .*AGENTS\.md a symbolic link to .*id_ed25519, not a file; Deft left it as it is and did not read it/,
    );
    assert.doesNotMatch(r.stderr, /drafted/);
    assert.ok(
      !JSON.stringify(mock.requests).includes("marker-c0ffee"),
      "the secret reached the model",
    );
    assert.equal(await Deno.readTextFile(p.marker), SECRET);
  } finally {
    await mock.close();
  }
});
