/**
 * The one-file property: `deno task bundle` output, copied alone into an empty directory (no
 * node_modules, no deno.json), runs with only the permission flags docs/install.md documents.
 */
import assert from "node:assert/strict";
import { mockRunArgs, REPO_ROOT } from "../../helpers/deft.ts";
import { anthropicToolUses, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { loopbackServer } from "../../helpers/loopback.ts";
import { trustedHomeWith } from "../../helpers/deft.ts";
import { BUNDLE_FULL_FLAGS } from "../../helpers/deno_flags.ts";

/** The flags docs/install.md documents for running the bundle. */
const FLAGS = [...BUNDLE_FULL_FLAGS];

async function run(
  dir: string,
  args: string[],
  stdin?: string,
  flags: string[] = FLAGS,
  env: Record<string, string> = {},
) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "deft.js", ...args],
    cwd: dir,
    env: { NO_COLOR: "1", DEFT_CACHE_DIR: `${dir}/.cache`, ...env },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/**
 * The files of Deno's cache folder `dir`, with their contents: its databases and their logs,
 * never the shared-memory index that a reader changes too.
 */
async function cacheFiles(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string) => {
    for await (const entry of Deno.readDir(at)) {
      const path = `${at}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile && !entry.name.endsWith("-shm")) {
        const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
        out[path] = new Uint8Array(digest).toHex();
      }
    }
  };
  await walk(dir);
  return out;
}

Deno.test({
  name: "the bundle runs alone: tools, editor, bash, ckg, replayed and SDK-driven runs, errors",
  sanitizeResources: false,
  async fn() {
    await using tmp = await tempDir("deft-bundle-");
    const dir = tmp.path;
    const built = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "scripts/bundle.ts", `${dir}/deft.js`],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(built.success, new TextDecoder().decode(built.stderr));
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["deft.js"]);

    const tools = await run(dir, ["tools", "--json"]);
    assert.equal(tools.code, 0, tools.stderr);
    assert.ok(JSON.parse(tools.stdout).some((d: { name: string }) => d.name === "ckg"));

    // The interactive prompt comes before its session, which loads behind it from the bundle's
    // own chunks: /help answers, /exit leaves once the session is up.
    const chat = await run(dir, [
      "interactive",
      "--approval",
      "never",
      "--provider",
      "openai_compatible",
      "-m",
      "m",
      "-k",
      "k",
      "--model-base-url",
      "http://127.0.0.1:9/v1",
    ], "/help\n/exit\n");
    assert.equal(chat.code, 0, chat.stdout + chat.stderr);
    assert.match(chat.stderr, /deft interactive: openai_compatible\/m[\s\S]*Commands:[\s\S]*bye/);

    await Deno.writeTextFile(`${dir}/app.py`, "def greet(name):\n\treturn f'hi {name}'\n");
    const edit = await run(dir, [
      "tool",
      "str_replace_based_edit_tool",
      JSON.stringify({
        command: "str_replace",
        path: `${dir}/app.py`,
        old_str: "hi {name}",
        new_str: "hello {name}",
      }),
    ]);
    assert.equal(edit.code, 0, edit.stdout + edit.stderr);
    assert.equal(
      await Deno.readTextFile(`${dir}/app.py`),
      "def greet(name):\n\treturn f'hello {name}'\n",
    );

    const bash = await run(dir, [
      "tool",
      "bash",
      JSON.stringify({ command: "echo $((6*7)); pwd" }),
    ]);
    assert.equal(bash.code, 0, bash.stdout + bash.stderr);
    assert.equal(JSON.parse(bash.stdout).output.trim(), `42\n${dir}`);

    const ckg = await run(dir, [
      "tool",
      "ckg",
      JSON.stringify({ command: "search_function", path: dir, identifier: "greet" }),
    ]);
    assert.equal(ckg.code, 0, ckg.stdout + ckg.stderr);
    assert.match(JSON.parse(ckg.stdout).output, /Found 1 function/);
    assert.match(JSON.parse(ckg.stdout).output, /app\.py:1-2/);

    // The whole program: commander, the agent loop, replay, the tool host, a patch.
    const repo = `${dir}/repo`;
    await Deno.mkdir(repo);
    for (const entry of Deno.readDirSync(`${REPO_ROOT}/examples/demo/repo`)) {
      await Deno.copyFile(
        `${REPO_ROOT}/examples/demo/repo/${entry.name}`,
        `${repo}/${entry.name}`,
      );
    }
    const git = ["-c", "user.name=deft", "-c", "user.email=test@deft.invalid"];
    for (const args of [["init", "-q"], [...git, "add", "."], [...git, "commit", "-qm", "bug"]]) {
      const out = await new Deno.Command("git", { args, cwd: repo, stdout: "null" }).output();
      assert.ok(out.success, `git ${args.join(" ")}`);
    }
    const replay = await run(dir, [
      "run",
      "--replay",
      `${REPO_ROOT}/examples/demo/trajectory.json`,
      "-w",
      repo,
      "--patch-path",
      `${dir}/fix.patch`,
      "-t",
      `${dir}/trajectory.json`,
    ]);
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    assert.match(await Deno.readTextFile(`${dir}/fix.patch`), /^\+.*a \+ b/m);

    // Provider SDKs load from the packed modules and speak HTTP to a local mock.
    for (const provider of ["openai_compatible", "anthropic"]) {
      const mock = MockLLM.start([
        provider === "anthropic"
          ? anthropicToolUses([["bash", { command: "echo from-the-sdk" }]])
          : chatToolCalls([["bash", { command: "echo from-the-sdk" }]]),
        provider === "anthropic"
          ? anthropicToolUses([["task_done", {}]])
          : chatToolCalls([["task_done", {}]]),
      ]);
      try {
        const base = provider === "anthropic" ? mock.url : `${mock.url}/v1`;
        const agent = await run(
          dir,
          mockRunArgs(mock, "say hello", repo, {
            provider,
            baseUrl: base,
            apiKey: "sk-test",
            extra: ["-t", `${dir}/${provider}.json`, "--json"],
          }),
        );
        assert.equal(agent.code, 0, agent.stderr);
        assert.equal(JSON.parse(agent.stdout).success, true);
        assert.match(JSON.stringify(mock.requests[1].body), /from-the-sdk/);
      } finally {
        await mock.close();
      }
    }

    // npm:yaml is loaded only once a config file is read (src/config/yaml.ts): from the packed
    // modules too, with its errors' positions.
    await Deno.writeTextFile(`${dir}/c.yaml`, "tool_settings:\n  bash_timeout: 77\n");
    const config = await run(dir, ["config", "--config-file", `${dir}/c.yaml`]);
    assert.equal(config.code, 0, config.stderr);
    assert.match(config.stdout, /bash_timeout: 77/);
    await Deno.writeTextFile(`${dir}/bad.yaml`, "tool_settings: [\n");
    const bad = await run(dir, ["config", "--config-file", `${dir}/bad.yaml`]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /bad\.yaml: invalid YAML at line 2/);

    const usage = await run(dir, ["tool"]);
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /missing required argument 'name'/);
    const search = await run(dir, ["ckg", "search-function", "greet", "--path", dir, "--json"]);
    assert.equal(search.code, 0, search.stderr);
    assert.match(search.stdout, /app\.py/);

    // With a sandbox the editor runs in this bundle started again inside bubblewrap, under the
    // narrowed flags, though the bundle sits outside the workspace in /tmp, which it hides.
    await using wsTemp = await tempDir("deft-bundle-ws-");
    const ws = wsTemp.path;
    await Deno.copyFile(`${dir}/app.py`, `${ws}/app.py`);
    const boxed = await run(
      dir,
      [
        "tool",
        "--sandbox",
        "workspace-write",
        "-w",
        ws,
        "str_replace_based_edit_tool",
        JSON.stringify({ command: "view", path: `${ws}/app.py` }),
      ],
      undefined,
      [
        ...FLAGS.slice(0, 3),
        `--allow-read=${dir},${ws}`,
        `--allow-write=${ws}`,
        "--allow-run=bash,bwrap",
      ],
    ).finally(() => Deno.remove(ws, { recursive: true }));
    assert.equal(boxed.code, 0, boxed.stderr + boxed.stdout);
    assert.match(JSON.parse(boxed.stdout).output, /def greet/);

    // A network list: the sandboxed shell's only way out is the proxy, reached through the
    // forwarder, which is this bundle itself (`__network-forwarder`), started from /tmp alone.
    const allowed = await loopbackServer("allowed");
    const other = await loopbackServer("other");
    const home = await trustedHomeWith(
      "deft-bundle-net-",
      () => `network:\n  allow: ["127.0.0.1:${allowed.port}"]\n`,
    );
    await Deno.mkdir(`${home}/ws`);
    const curl = (port: number, path: string) =>
      `curl -sS --max-time 20 http://127.0.0.1:${port}${path}`;
    const mock = MockLLM.start([
      chatToolCalls([["bash", {
        command: `${curl(allowed.port, "/ok")}; ${curl(other.port, "/private")}; ` +
          `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${allowed.port}/direct ` +
          `|| echo no route`,
      }]]),
      chatToolCalls([["task_done", {}]], "done"),
    ]);
    try {
      const netRun = await run(
        dir,
        mockRunArgs(mock, "fetch", `${home}/ws`, {
          extra: ["--sandbox", "workspace-write", "--approval", "never"],
        }),
        undefined,
        FLAGS,
        { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      );
      assert.equal(netRun.code, 0, netRun.stderr);
      const seen = JSON.stringify(mock.requests[1].body.messages);
      assert.doesNotMatch(seen, /forwarder did not start/);
      assert.match(seen, /allowed \/ok/);
      assert.match(seen, new RegExp(`Blocked by Deft: 127\\.0\\.0\\.1:${other.port}`));
      assert.match(seen, /no route/);
      assert.deepEqual(allowed.paths, ["/ok"]);
      assert.deepEqual(other.paths, []);
      assert.match(netRun.stderr, new RegExp(`network: blocked 127\\.0\\.0\\.1:${other.port}`));
    } finally {
      await mock.close();
      await allowed.close();
      await other.close();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }

    // A start writes nothing in Deno's cache once the bundle has run there: its modules are not
    // modules from Blob URLs, which Deno analysed, compiled and stored anew on every start (about
    // a thousand database pages a start, and twice the start-up time of the source tree).
    const denoDir = `${dir}/deno-dir`;
    const start = async () => {
      const r = await run(dir, ["tool", "task_done", "{}"], undefined, FLAGS, {
        DENO_DIR: denoDir,
      });
      assert.equal(r.code, 0, r.stderr);
    };
    await start();
    await start();
    const before = await cacheFiles(denoDir);
    await start();
    assert.deepEqual(await cacheFiles(denoDir), before, "a start of the bundle wrote Deno's cache");

    // The launcher reads its packed modules from its own file: a copy that cannot, or one whose
    // bytes moved (an extra line, CRLF line ends), says so instead of failing obscurely.
    const blind = await run(dir, ["ckg", "search-function", "greet", "--path", dir], undefined, [
      ...FLAGS.filter((f) => f !== "--allow-read"),
      `--allow-read=${dir}/app.py`,
    ]);
    assert.equal(blind.code, 1, blind.stderr);
    assert.match(blind.stderr, /must be able to read itself .*--allow-read/);
    const unreadable = await run(dir, ["tools"], undefined, [
      ...FLAGS.filter((f) => f !== "--allow-read"),
      `--allow-read=${dir}/app.py`,
    ]);
    assert.equal(unreadable.code, 2, unreadable.stderr);
    assert.match(
      unreadable.stderr,
      /permissions do not let Deft read the workspace .*--allow-read/,
    );
    const damaged = `${dir}/damaged`;
    await Deno.mkdir(damaged);
    await Deno.writeTextFile(
      `${damaged}/deft.js`,
      `${await Deno.readTextFile(`${dir}/deft.js`)}\n`,
    );
    const broken = await run(damaged, ["ckg", "search-function", "greet", "--path", dir]);
    assert.equal(broken.code, 1, broken.stderr);
    assert.match(broken.stderr, /deft\.js is damaged/);
  },
});
