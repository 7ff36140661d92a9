/**
 * The one trust boundary: every child process gets its argv and environment from src/policy, and
 * what each kind of child sees is what the policy says (git and servers see no key).
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { runGit } from "../../../src/policy/git.ts";
import {
  childEnvironment,
  mcpServerLaunch,
  processPolicy,
  runChild,
  shellLaunch,
  taskTestLaunch,
} from "../../../src/policy/process.ts";
import { tempDir } from "../../helpers/temp.ts";

const SRC = new URL("../../../src/", import.meta.url).pathname;

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sources(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

// The argv and environment builders; outside src/policy nobody may call them.
const BUILDERS =
  /\b(sandboxCommand|bwrapArgs|mountArgs|pidNamespaceCommand|gitInvocation|shellEnvironment)\s*\(/;
const COMMAND = /\bDeno\.Command\s*\(/;
const WORKER = /\bnew\s+Worker\s*\(/;

/** Each code line of `file` (comments left out) with its number. */
async function codeLines(file: string): Promise<{ code: string; line: string; n: number }[]> {
  const lines = (await Deno.readTextFile(file)).split("\n");
  return lines.map((line, i) => ({ code: line.replace(/\/\/.*$/, ""), line, n: i + 1 }))
    .filter(({ code }) => !/^\s*\*/.test(code)); // a doc comment
}

Deno.test("only src/policy starts processes or workers, or builds a child's argv and environment", async () => {
  const offenders: string[] = [];
  for await (const file of sources(SRC)) {
    const rel = relative(SRC, file);
    if (rel.startsWith("policy/")) continue;
    for (const { code, line, n } of await codeLines(file)) {
      if (COMMAND.test(code) || WORKER.test(code) || BUILDERS.test(code)) {
        offenders.push(`src/${rel}:${n}: ${line.trim()}`);
      }
    }
  }
  assert.deepEqual(
    offenders,
    [],
    `start children through src/policy/process.ts, workers through src/policy/workers.ts:\n` +
      offenders.join("\n"),
  );
});

Deno.test("inside src/policy, one builder starts every child and one every worker", async () => {
  const offenders: string[] = [];
  for await (const file of sources(join(SRC, "policy"))) {
    const rel = relative(SRC, file);
    for (const { code, line, n } of await codeLines(file)) {
      // spawn.ts clears the inherited environment for every child; workers.ts gives every
      // worker the permissions a policy function chose.
      if (
        (COMMAND.test(code) && rel !== "policy/spawn.ts") ||
        (WORKER.test(code) && rel !== "policy/workers.ts")
      ) {
        offenders.push(`src/${rel}:${n}: ${line.trim()}`);
      }
    }
  }
  assert.deepEqual(
    offenders,
    [],
    `start children with spawnChild/runChild (spawn.ts), workers with startWorker:\n` +
      offenders.join("\n"),
  );
});

Deno.test("the code graph's parser workers get no permission at all", async () => {
  const { parserWorkerPermissions, startWorker } = await import("../../../src/policy/workers.ts");
  const probe = URL.createObjectURL(
    new Blob([
      `const tries = {
        read: () => Deno.readTextFileSync("/etc/passwd"),
        env: () => Deno.env.get("HOME"),
        run: () => new Deno.Command("true").outputSync(),
      };
      const refused = [];
      for (const [kind, attempt] of Object.entries(tries)) {
        try { attempt(); } catch (e) { if (e instanceof Deno.errors.NotCapable) refused.push(kind); }
      }
      self.postMessage(refused);`,
    ], { type: "text/javascript" }),
  );
  const worker = startWorker(probe, parserWorkerPermissions(), "probe");
  try {
    const refused = await new Promise((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
    });
    assert.deepEqual(refused, ["read", "env", "run"]);
  } finally {
    worker.terminate();
    URL.revokeObjectURL(probe);
  }
});

const SECRETS = {
  ANTHROPIC_API_KEY: "sk-ant-test-secret",
  GITHUB_TOKEN: "ghp_testsecret",
  MY_PASSWORD: "hunter2",
};

function withSecrets<T>(body: () => Promise<T>): Promise<T> {
  for (const [k, v] of Object.entries(SECRETS)) Deno.env.set(k, v);
  return body().finally(() => {
    for (const k of Object.keys(SECRETS)) Deno.env.delete(k);
  });
}

Deno.test("git never sees a key: what git passes to the programs it starts holds none", async () => {
  const dirTemp = await tempDir();
  const dir = dirTemp.path;
  try {
    await withSecrets(async () => {
      // An alias given on the command line is Deft's own, so it runs: it prints git's env.
      const out = await runGit(dir, ["-c", "alias.showenv=!env", "showenv"]);
      assert.ok(out.ok, out.err);
      for (const [name, value] of Object.entries(SECRETS)) {
        assert.ok(!out.out.includes(value), `${name} reached git`);
      }
      assert.match(out.out, /^PATH=/m, "git keeps PATH");
      assert.match(out.out, /^GIT_CONFIG_COUNT=/m, "git runs hardened");
    });
  } finally {
    await dirTemp.remove();
  }
});

Deno.test("environments by kind: the shell follows shell_environment, servers and helpers get little", async () => {
  await withSecrets(() => {
    const shell = childEnvironment("shell", { environment: { set: { EXTRA: "1" } } });
    assert.equal(shell.ANTHROPIC_API_KEY, undefined);
    assert.equal(shell.EXTRA, "1");
    assert.equal(shell.PAGER, "cat", "the shell is non-interactive");
    const server = mcpServerLaunch({ command: "srv", env: { TOKEN: "given" }, cwd: "/" });
    assert.equal(server.env.ANTHROPIC_API_KEY, undefined);
    assert.equal(server.env.GITHUB_TOKEN, undefined);
    assert.equal(server.env.TOKEN, "given", "a server gets what its config passes on purpose");
    assert.deepEqual(childEnvironment("none"), {});
    assert.equal(childEnvironment("deft").ANTHROPIC_API_KEY, SECRETS.ANTHROPIC_API_KEY);
    return Promise.resolve();
  });
});

Deno.test("the shell view confines by the policy: none holds a PID namespace, a sandbox is bwrap", () => {
  const none = processPolicy("/w", { sandbox: "none", unsharePath: "/nonexistent" });
  const plain = shellLaunch(none, { cwd: "/w/sub" });
  assert.equal(plain.cwd, "/w/sub");
  const boxed = shellLaunch(processPolicy("/w", { sandbox: "read-only" }), { cwd: "/w/sub" });
  assert.match(boxed.program, /bwrap$/);
  const at = boxed.args.findIndex((a, i) => a === "--ro-bind" && boxed.args[i + 1] === "/w");
  assert.ok(at >= 0, "the workspace is bound read-only");
  assert.equal(boxed.args.includes("--share-net"), false);
});

Deno.test("a batch task's test runs in the task's sandbox with the shell's environment", async () => {
  const workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  try {
    await withSecrets(async () => {
      const policy = processPolicy(workspace, { sandbox: "workspace-write" });
      const launch = taskTestLaunch(
        policy,
        "touch ok /var/tmp/deft-test-escape-$$ 2>/dev/null; env",
        { TAG: "t" },
      );
      const out = await runChild(launch);
      const text = new TextDecoder().decode(out.stdout);
      assert.ok(!text.includes(SECRETS.ANTHROPIC_API_KEY), "a test sees no key");
      assert.match(text, /^TAG=t$/m);
      await Deno.stat(join(workspace, "ok"));
      const leaked = [...Deno.readDirSync("/var/tmp")].filter((e) =>
        e.name.startsWith("deft-test-escape-")
      );
      assert.deepEqual(leaked, [], "the test could write outside the workspace");
    });
  } finally {
    await workspaceTemp.remove();
  }
});
