/**
 * Finding 11 (issue 28), from the attacker's side: a hostile repository (an untrusted `deft.yaml`
 * with an escape sequence in a key name and in its model id) and a hostile model (OSC 0/OSC 52
 * in a tool name, C1 controls, bidi and zero-width characters in a command, a screen clear in its
 * text and in task_done's result). Whatever reaches the terminal (stderr piped: the plain console;
 * a real pty: the live console) holds no raw ESC, C1 control or bidi/zero-width character.
 */
import assert from "node:assert/strict";
import { mockRunArgs, runDeft, trustedHome } from "../../../helpers/deft.ts";
import { runDeftInPty } from "../../../helpers/pty.ts";
import { chatToolCalls, MockLLM } from "../../../helpers/mock_llm.ts";
import { tempDirUntilExit } from "../../../helpers/temp.ts";

const OSC_TITLE = "\x1b]0;pwned\x07";
const OSC_CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07";
const CLEAR = "\x1b[2J";
const C1_CSI = "\x9b2J";
const BIDI = "\u202e\u2066\u200b\u200f";

// Raw ESC, C1 controls (0x80-0x9f), bidi and zero-width formatting characters.
// deno-lint-ignore no-control-regex
const UNSAFE = /[\x1b\x80-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

function assertInert(output: string, what: string) {
  const hit = UNSAFE.exec(output);
  assert.equal(
    hit,
    null,
    `${what} shows ${JSON.stringify(hit?.[0])} raw at ${hit?.index}:\n${JSON.stringify(output)}`,
  );
}

async function hostile() {
  const home = await trustedHome();
  await Deno.writeTextFile(
    `${home}/.config/deft/config.yaml`,
    `trusted_folders: [${JSON.stringify(home)}]\n` +
      `model_providers:\n  openai_compatible: { provider: openai_compatible }\n`,
  );
  // The repository is outside the trusted home: its deft.yaml is untrusted.
  const repo = await tempDirUntilExit("deft-hostile-repo-");
  await Deno.writeTextFile(
    `${repo}/deft.yaml`,
    [
      "models:",
      `  evil: { model_provider: openai_compatible, model: ${
        JSON.stringify(`m${CLEAR}${OSC_TITLE}`)
      } }`,
      "agents:",
      "  deft_agent: { model: evil }",
      `${JSON.stringify(`x${OSC_CLIPBOARD}`)}: 1`,
      "",
    ].join("\n"),
  );
  const mock = MockLLM.start([
    chatToolCalls(
      [[`bash${OSC_TITLE}${OSC_CLIPBOARD}`, { command: "ls" }]],
      `thinking${CLEAR}${C1_CSI}`,
    ),
    chatToolCalls([["bash", { command: `echo ok ${BIDI}${C1_CSI}# ${OSC_TITLE}` }]], "next"),
    // The live console shows each edit's diff: the file's new lines are the model's text too.
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "create",
      path: `${repo}/evil.txt`,
      file_text: `line ${CLEAR}${OSC_TITLE}${C1_CSI}\n`,
    }]], "edit"),
    // task_done's result is the model's text beside the call.
    chatToolCalls([["task_done", {}]], `done${CLEAR}${OSC_CLIPBOARD}${BIDI}`),
  ]);
  // No -p/-m: the provider and model id are the untrusted repository's.
  const args = mockRunArgs(mock, `task${OSC_TITLE}${BIDI}`, repo, {
    extra: ["--sandbox", "none"],
  }).filter((a, i, all) => !["-m", "-p"].includes(a) && !["-m", "-p"].includes(all[i - 1]));
  return { home, repo, mock, args };
}

Deno.test("plain console (stderr piped): hostile names, text, results and config stay inert", async () => {
  const { home, repo, mock, args } = await hostile();
  try {
    const r = await runDeft(args, { cwd: repo, env: { HOME: home, DEFT_RETRY_BASE_MS: "5" } });
    assert.match(r.stderr, /not trusted/, "the untrusted key was reported");
    assert.match(r.stderr, /␛\[2J/, "the model id was shown, neutralised");
    assertInert(r.stderr, "stderr");
    const sessions = await runDeft(["sessions", "-w", repo], {
      cwd: home,
      env: { HOME: home, DEFT_RETRY_BASE_MS: "5" },
    });
    assert.equal(sessions.code, 0, sessions.stderr);
    assert.match(sessions.stdout, /task/);
    assertInert(sessions.stdout + sessions.stderr, "deft sessions");
  } finally {
    await mock.close();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("live console in a real terminal: hostile names, text, results and config stay inert", async () => {
  const { home, repo, mock, args } = await hostile();
  try {
    // On a terminal the untrusted keys are asked about first; the question shows them too.
    const r = await runDeftInPty(args, [{ expect: "\\[y/N\\] ", send: "n\r" }], {
      cwd: repo,
      env: { HOME: home, DEFT_RETRY_BASE_MS: "5" },
    });
    assert.equal(r.failed, null, r.output);
    assert.match(r.output, /x\\x1b\]52;c;/, "the hostile key was asked about, spelled out");
    assert.match(r.output, /completed/, r.output);
    assert.match(r.output, /m␛\[2J/, "the model id was shown, neutralised");
    assert.match(r.output, /\+line ␛\[2J/, "the edit's diff was shown, neutralised");
    // The console's own colour, spinner and prompt codes (colour, erase, cursor column) are ESC
    // sequences too: only those may remain.
    // deno-lint-ignore no-control-regex
    const own = r.output.replace(/\x1b\[[0-9;]*[mKGJ]|\r/g, "");
    assertInert(own, "the terminal");
  } finally {
    await mock.close();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(repo, { recursive: true });
  }
});
