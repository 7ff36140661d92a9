/**
 * A workspace at `/`, `/usr` or `/usr/bin` (what a newcomer gets by typing `deft` there) gives
 * clear answers, never a Deno stack trace and never a long wait (issue 36, finding 12).
 *
 * It broke two ways. The sandboxed tool host was started with `--allow-run=bash,…` and
 * `--allow-write=/usr`; Deno then withholds writing /usr/bin/bash from that process, so it could
 * not give its worker "write /usr" ("Can't escalate parent thread permissions"), and every editor
 * and code-graph call answered with the host's stack trace. And the shell's bubblewrap bound a
 * workspace at `/` over its own /dev, /proc and /tmp, so the shell could not open /dev/null and
 * the start timed out after 15 s, blaming bubblewrap.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A text file (a script) in /usr/bin, which every workspace here holds. */
function scriptInUsrBin(): string {
  for (const entry of Deno.readDirSync("/usr/bin")) {
    const path = `/usr/bin/${entry.name}`;
    try {
      if (!entry.isFile || Deno.statSync(path).size > 20_000) continue;
      const head = Deno.readFileSync(path).subarray(0, 2);
      if (head[0] === 0x23 && head[1] === 0x21) return path; // "#!"
    } catch {
      // Unreadable: try the next one.
    }
  }
  throw new Error("no script in /usr/bin to view");
}

/** A call's answer, checked to be one clear JSON result, in good time. */
async function call(
  workspace: string,
  name: string,
  args: Record<string, unknown>,
  extra: string[],
  env: Record<string, string>,
): Promise<{ success: boolean; output: string | null; error: string | null }> {
  const started = performance.now();
  const run = await runDeft(["tool", name, JSON.stringify(args), "-w", workspace, ...extra], {
    env,
    cwd: "/",
  });
  const seconds = (performance.now() - started) / 1000;
  const what = `${name} with -w ${workspace} ${extra.join(" ")}`;
  let result: { success: boolean; output: string | null; error: string | null };
  try {
    result = JSON.parse(run.stdout);
  } catch {
    throw new Error(`${what}: not one JSON result:\n${run.stdout}\n${run.stderr}`);
  }
  const said = `${result.error ?? ""}\n${run.stderr}`;
  assert.doesNotMatch(
    said,
    // deno-lint-ignore no-control-regex -- the colours of a stack trace are what is looked for
    /\u001b\[|\n\s+at |Uncaught|escalate/,
    `${what}: a stack trace:\n${said}`,
  );
  // The shell's start gave up after 15 s; a call here takes a second or two.
  assert.ok(seconds < 12, `${what} took ${seconds.toFixed(1)} s`);
  return result;
}

for (const workspace of ["/", "/usr", "/usr/bin"]) {
  Deno.test(`a workspace at ${workspace}: the editors, the code graph and the shell answer`, async () => {
    await using cache = await tempDir("deft-sysws-cache-");
    const env = { DEFT_CACHE_DIR: cache.path };
    const file = workspace === "/" ? "/etc/passwd" : scriptInUsrBin();
    for (const sandbox of [[], ["--sandbox", "none"]]) {
      const mode = sandbox.join(" ") || "default sandbox";
      const view = await call(
        workspace,
        "str_replace_based_edit_tool",
        {
          command: "view",
          path: file,
        },
        sandbox,
        env,
      );
      assert.ok(view.success, `view ${file} (${mode}): ${view.error}`);
      assert.match(view.output!, /\s1\t/);

      const json = await call(
        workspace,
        "json_edit_tool",
        {
          operation: "view",
          file_path: `${workspace === "/" ? "" : workspace}/deft-no-such.json`,
        },
        sandbox,
        env,
      );
      assert.match(json.error ?? "", /does not exist/, `the JSON editor answered (${mode})`);

      const ckg = await call(
        workspace,
        "ckg",
        {
          command: "search_function",
          path: "/usr/bin",
          identifier: "deft_no_such_function",
        },
        sandbox,
        env,
      );
      assert.ok(ckg.success, `ckg (${mode}): ${ckg.error}`);
      assert.match(ckg.output!, /No functions named deft_no_such_function/);

      const bash = await call(workspace, "bash", { command: "echo answered" }, sandbox, env);
      assert.ok(bash.success, `bash (${mode}): ${bash.error}`);
      assert.equal(bash.output!.trim(), "answered");
    }
  });
}

Deno.test("a workspace at /: the sandbox still keeps /tmp, /run and /dev its own", async () => {
  await using cache = await tempDir("deft-sysws-cache-");
  const marker = `deft-sysws-${crypto.randomUUID()}`;
  const bash = await call(
    "/",
    "bash",
    {
      command: `echo x > /tmp/${marker} && echo > /dev/null && ls -A /run | wc -l`,
    },
    [],
    { DEFT_CACHE_DIR: cache.path },
  );
  assert.ok(bash.success, bash.error ?? "");
  assert.equal(bash.output!.trim(), "0", "/run is an empty private folder");
  await assert.rejects(Deno.stat(`/tmp/${marker}`), Deno.errors.NotFound, "/tmp is private");
});
