/** The bash tool keeps one shell: state persists, stdin is /dev/null, errors never desync it. */
import assert from "node:assert/strict";
import { ToolExecutor } from "../../../../src/tools/executor.ts";
import { withHarness } from "../../../helpers/bash.ts";

Deno.test("bash: the first call starts in the workspace", async () => {
  await withHarness({}, async (h) => {
    const r = await h.run("pwd");
    assert.deepEqual(r, { output: `${h.workspace}\n`, error: null, error_code: 0 });
  });
});

Deno.test("bash: cd, variables, functions, aliases and options persist across calls", async () => {
  await withHarness({}, async (h) => {
    await Deno.mkdir(`${h.workspace}/sub dir`);
    const setup = await h.run(
      [
        "cd 'sub dir'",
        "export EXPORTED=e1",
        "PLAIN=p1",
        "declare -A MAP=([k]=v)",
        'greet() { echo "hello $1"; }',
        "alias ll='echo aliased'",
        "set -o pipefail",
      ].join("\n"),
    );
    assert.equal(setup.error_code, 0, String(setup.error));
    const r = await h.run(
      'pwd; echo "$EXPORTED $PLAIN ${MAP[k]}"; bash -c \'echo "child sees $EXPORTED"\'; greet you; ll',
    );
    assert.equal(
      r.output,
      `${h.workspace}/sub dir\ne1 p1 v\nchild sees e1\nhello you\naliased\n`,
    );
    const pipefail = await h.run("false | true");
    assert.equal(pipefail.error_code, 1, "set -o pipefail persisted");
  });
});

Deno.test("bash: stdout, stderr and the exit status are split", async () => {
  await withHarness({}, async (h) => {
    const r = await h.run("echo out; echo err >&2; printf 'no newline'; (exit 7)");
    assert.deepEqual(r, { output: "out\nno newline", error: "err\n", error_code: 7 });
    const quiet = await h.run("true");
    assert.deepEqual(quiet, { output: "", error: null, error_code: 0 });
  });
});

Deno.test("bash: commands that read stdin get end-of-file at once", async () => {
  await withHarness({}, async (h) => {
    const start = performance.now();
    const r = await h.run(
      'cat; echo "cat=$?"; read -r x; echo "read=$? x=[$x]"; head -n 1; python3; echo "py=$?"',
      { timeout: 20 },
    );
    assert.equal(r.output, "cat=0\nread=1 x=[]\npy=0\n");
    assert.equal(r.error_code, 0);
    assert.ok(performance.now() - start < 15_000);
    // The control pipe is intact: the next call works.
    assert.equal((await h.run("echo next")).output, "next\n");
  });
});

Deno.test("bash: editors and pagers do not block (non-interactive environment)", async () => {
  await withHarness({}, async (h) => {
    const env = await h.run(
      'echo "$PAGER $GIT_PAGER $GIT_EDITOR $EDITOR $VISUAL $GIT_TERMINAL_PROMPT $DEBIAN_FRONTEND"',
    );
    assert.equal(env.output, "cat cat true true true 0 noninteractive\n");
    const git = await h.run(
      "git init -q repo && cd repo && git -c user.name=n -c user.email=e@x commit -q " +
        "--allow-empty; echo status=$?; git log --oneline | wc -l; cd ..",
      { timeout: 20 },
    );
    assert.match(git.output ?? "", /status=1\n0\n/);
    assert.match(git.error ?? "", /empty commit message/);
  });
});

Deno.test("bash: syntax errors fail the call and the next call works", async () => {
  await withHarness({}, async (h) => {
    await h.run("KEEP=kept");
    for (const bad of ["echo 'unclosed", 'echo "unclosed', "if true; then echo x", "}", "(("]) {
      const r = await h.run(bad);
      assert.equal(r.error_code, 2, bad);
      assert.match(r.error ?? "", /syntax error|unexpected EOF/, bad);
      const next = await h.run("echo $KEEP");
      assert.deepEqual(next, { output: "kept\n", error: null, error_code: 0 }, `after ${bad}`);
    }
  });
});

Deno.test("bash: multi-line, Unicode and large commands arrive intact", async () => {
  await withHarness({}, async (h) => {
    const r = await h.run(
      "x='héllo 日本 🎉'\necho \"$x\"\ncat <<'EOF'\n$not_expanded `nor this`\nEOF",
    );
    assert.equal(r.output, "héllo 日本 🎉\n$not_expanded `nor this`\n");
    const body = "y".repeat(200_000);
    const big = await h.run(`cat <<'EOF' | wc -c\n${body}\nEOF`);
    assert.equal(big.output?.trim(), String(body.length + 1));
  });
});

Deno.test("bash: Unicode and plain commands arrive intact in a UTF-8 locale", async () => {
  await withHarness({}, async (h) => {
    // Bash counts characters in its locale; a command's byte count must still be what is read.
    const locale = await h.run("export LC_ALL=C.UTF-8; locale charmap");
    assert.equal(locale.output, "UTF-8\n");
    const unicode = await h.run("x='日本 é'; echo \"${#x}:$x\"", { timeout: 10 });
    assert.deepEqual(unicode, { output: "4:日本 é\n", error: null, error_code: 0 });
    const plain = await h.run("printf '%s\\t|\\n' plain", { timeout: 10 });
    assert.deepEqual(plain, { output: "plain\t|\n", error: null, error_code: 0 });
  });
});

Deno.test("bash: set -x traces only the user's commands", async () => {
  await withHarness({}, async (h) => {
    await h.run("set -x");
    const r = await h.run("echo traced");
    assert.equal(r.output, "traced\n");
    // Several `+`: the command runs a few levels below the top (a sourced `eval`).
    assert.match(r.error!, /^\++ echo traced\n$/);
    const off = await h.run("set +x; echo quiet");
    assert.equal(off.output, "quiet\n");
    assert.doesNotMatch(off.error ?? "", /__deft/);
    assert.equal((await h.run("echo still quiet")).error, null);
  });
});

Deno.test("bash: a command that redirects the shell's own stdout cannot hide the marker", async () => {
  await withHarness({}, async (h) => {
    const r = await h.run("exec 3>&1 >/dev/null; echo hidden");
    assert.equal(r.error_code, 0);
    assert.equal(r.output, "");
    const back = await h.run("exec >&3 3>&-; echo visible");
    assert.equal(back.output, "visible\n");
  });
});

Deno.test("bash: commands cannot break the session's own machinery", async () => {
  await withHarness({}, async (h) => {
    for (
      const command of [
        "unalias -a",
        "shopt -u expand_aliases",
        "alias __deft_run='echo hijacked'",
        "trap 'echo mine' INT",
        "IFS=x; LC_ALL=C",
        "set -o noglob -o noclobber",
      ]
    ) {
      const r = await h.run(command);
      assert.equal(r.error_code, 0, command);
      const next = await h.run("echo fine");
      assert.deepEqual(next, { output: "fine\n", error: null, error_code: 0 }, `after ${command}`);
    }
    const timedOut = await h.run("sleep 30", { timeout: 0.5 });
    assert.match(timedOut.error!, /shell is still usable/);
  });
});

Deno.test("bash: echo's settings and odd directory names do not garble the end marker", async () => {
  // A garbled marker would leave the call waiting for its end: it times out instead.
  const FAST = { timeout: 10 };
  await withHarness({}, async (h) => {
    // The marker carries the directory; echo must not read its backslashes or a leading dash.
    const odd = `${h.workspace}/-n \\c \\n %s`;
    await Deno.mkdir(odd);
    const cd = await h.run(`cd '${odd}' && shopt -s xpg_echo`, FAST);
    assert.equal(cd.error_code, 0, String(cd.error));
    const here = await h.run("pwd; echo 'a\\tb'", FAST);
    assert.deepEqual(here, { output: `${odd}\na\tb\n`, error: null, error_code: 0 });
    // In POSIX mode with xpg_echo, echo takes no options at all.
    const posix = await h.run("set -o posix; false", FAST);
    assert.equal(posix.error_code, 1);
    const after = await h.run("pwd", FAST);
    assert.deepEqual(after, { output: `${odd}\n`, error: null, error_code: 0 });
  });
});

Deno.test("bash: missing command and restart", async () => {
  await withHarness({}, async (h) => {
    for (const args of [{}, { command: "" }, { command: "  \n" }]) {
      const r = await h.tool.execute(args);
      assert.equal(r.error_code, -1);
      assert.match(r.error ?? "", /No command provided for the bash tool/);
    }
    await h.run("cd /; export GONE=1");
    const restart = await h.tool.execute({ restart: true, command: "echo ignored" });
    assert.equal(restart.error_code, 0);
    assert.match(restart.output ?? "", /tool has been restarted/);
    const r = await h.run('pwd; echo "[${GONE:-}]"');
    assert.equal(r.output, `${h.workspace}\n[]\n`);
    assert.equal(r.error, null, "a requested restart is not announced again");
  });
});

Deno.test("bash: through the executor, arguments are validated", async () => {
  await withHarness({}, async (h) => {
    const executor = new ToolExecutor([h.tool]);
    const call = (args: unknown) =>
      executor.executeToolCall({ name: "bash", call_id: "c", arguments: args });

    const okResult = await call({ command: "echo hi", restart: null, timeout: null });
    assert.equal(okResult.success, true);
    assert.equal(okResult.output, "hi\n");

    const wrongType = await call({ command: "echo hi", timeout: "5" });
    assert.equal(wrongType.success, false);
    assert.match(wrongType.error ?? "", /`timeout` must be a number/);

    for (const timeout of [0, -1]) {
      const bad = await call({ command: "echo hi", timeout });
      assert.equal(bad.success, false);
      assert.match(bad.error ?? "", /Invalid `timeout`.*positive number of seconds/);
    }

    const unknown = await call({ cmd: "ls" });
    assert.equal(unknown.success, false);
    assert.match(unknown.error ?? "", /unknown argument `cmd`/);

    const failing = await call({ command: "exit_code_test() { return 4; }; exit_code_test" });
    assert.deepEqual(
      [failing.success, failing.error_code, failing.name],
      [false, 4, "bash"],
    );
  });
});

Deno.test("bash: parallel calls to one session run one at a time, in order", async () => {
  await withHarness({}, async (h) => {
    const executor = new ToolExecutor([h.tool]);
    const calls = [0, 1, 2, 3].map((i) => ({
      name: "bash",
      call_id: `c${i}`,
      arguments: {
        command: `echo start-${i} >> log; sleep 0.05; echo end-${i} >> log; echo ${i}`,
      },
    }));
    const results = await executor.parallelToolCall(calls);
    assert.deepEqual(results.map((r) => r.output), ["0\n", "1\n", "2\n", "3\n"]);
    const log = await Deno.readTextFile(`${h.workspace}/log`);
    assert.equal(
      log,
      [0, 1, 2, 3].map((i) => `start-${i}\nend-${i}\n`).join(""),
      "no call started before the previous one ended",
    );
  });
});
