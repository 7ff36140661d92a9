/**
 * `deft run --docker-image` against real Docker (a private daemon this test starts and stops) and
 * real Podman, on the test image built from Debian packages (minbase + python3 + git) with a
 * repository at /testbed inside it and nothing bound. The tools run inside, from Deft's own code.
 * A runtime that cannot start fails these tests; they never skip.
 */
import assert from "node:assert/strict";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { mockRunArgs, REPO_ROOT, runMocked } from "../../helpers/deft.ts";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { tempDir } from "../../helpers/temp.ts";
import { noGlibcImage, type TestRuntime, testRuntime } from "../../helpers/containers.ts";

/** Fails unless `text` holds `part`, showing the text. */
function includes(text: string, part: string): void {
  assert.ok(text.includes(part), `expected ${JSON.stringify(part)} in:\n${text}`);
}

interface ToolResult {
  name: string;
  success: boolean;
  result: string | null;
  error: string | null;
}

/** Every tool result a trajectory recorded, in order. */
async function toolResults(path: string): Promise<ToolResult[]> {
  const data = JSON.parse(await Deno.readTextFile(path));
  // deno-lint-ignore no-explicit-any
  return data.agent_steps.flatMap((s: any) => s.tool_results ?? []);
}

/** `deft run` in a container of `rt`'s test image, the model scripted by `calls`. */
async function runInContainer(
  rt: TestRuntime,
  calls: [string, unknown][][],
  extra: string[] = [],
  env: Record<string, string> = {},
) {
  await using dir = await tempDir();
  const trajectory = `${dir.path}/t.json`;
  const mock = MockLLM.start([
    ...calls.map((c) => chatToolCalls(c)),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const run = await runMocked(mock, "fix it", "/testbed", {
      extra: [
        "--docker-image",
        rt.image,
        "--container-runtime",
        rt.name,
        "-t",
        trajectory,
        ...extra,
      ],
      env: { ...rt.env, ...env },
    });
    const results = await toolResults(trajectory).catch(() => []);
    return { ...run, results };
  } finally {
    await mock.close();
  }
}

/** Polls `check` until it holds or `ms` pass. */
async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

/** Starts `deft run` in a container whose first call sleeps; resolves once the container runs. */
async function startSleepingRun(rt: TestRuntime, dir: string) {
  const mock = MockLLM.start([chatToolCalls([["bash", { command: "sleep 600" }]])]);
  const args = mockRunArgs(mock, "wait", "/testbed", {
    extra: ["--docker-image", rt.image, "--container-runtime", rt.name, "-t", `${dir}/t.json`],
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args],
    env: { NO_COLOR: "1", ...rt.env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const started = await eventually(async () => (await rt.deftContainers()).length === 1);
  assert.ok(started, "the container did not start");
  // The sleep runs inside once the host has answered its first call.
  await eventually(() => Promise.resolve(mock.requests.length >= 1));
  await new Promise((r) => setTimeout(r, 1500));
  return { child, mock };
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `container (${runtime}): the tools run inside, isolated, and leave nothing behind`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);

    await t.step(
      "a run fixes the bug in /testbed, shell state persists, no host secret inside",
      async () => {
        await using patchDir = await tempDir();
        const run = await runInContainer(
          rt,
          [
            [["bash", { command: "export STATE=kept-$((6*7)); cd /testbed && pwd" }]],
            [["bash", { command: "echo state=$STATE; env" }]],
            [["str_replace_based_edit_tool", {
              command: "str_replace",
              path: "/testbed/calc.py",
              old_str: "return a - b",
              new_str: "return a + b",
            }]],
            [["bash", { command: "python3 test_calc.py && git -C /testbed diff --stat" }]],
            [["str_replace_based_edit_tool", {
              command: "create",
              path: "/testbed/notes.txt",
              file_text: "fixed\n",
            }]],
          ],
          ["--patch-path", `${patchDir.path}/fix.patch`],
          { DEFT_TEST_HOST_CANARY: "host-canary-value" },
        );
        assert.deepEqual(run.code, 0, run.stderr);
        const [pwd, state, edit, test] = run.results;
        assert.deepEqual(pwd.result, "/testbed\n");
        includes(state.result ?? "", "state=kept-42\n");
        // Neither the model's key (-k k) nor any variable of Deft's reaches the container.
        assert.ok(!/host-canary-value|DOCKER_HOST|OPENAI/.test(state.result ?? ""), state.result!);
        assert.ok(edit.success, edit.error ?? "");
        assert.match(test.result ?? "", /^ok\n.*calc\.py \| 2 \+-/s);
        // The patch, computed inside (new file included, the bytecode the test left out), applies
        // to a clean copy of the image's repository on the host.
        const patch = await Deno.readTextFile(`${patchDir.path}/fix.patch`);
        includes(patch, "-    return a - b\n+    return a + b\n");
        includes(patch, "+++ b/notes.txt");
        assert.ok(!patch.includes("__pycache__"), patch);
        const clone = `${patchDir.path}/clone`;
        await Deno.mkdir(clone);
        const copy = await new Deno.Command("bash", {
          args: [
            "-c",
            '"${@:2}" | tar -x -C "$1"',
            "bash",
            clone,
            rt.name,
            ...(rt.name === "podman" ? ["--runtime", "runc"] : []),
            "run",
            "--rm",
            "--network",
            "none",
            ...(rt.name === "podman"
              ? ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1000:1000"]
              : []),
            "--entrypoint",
            "tar",
            rt.image,
            "-C",
            "/testbed",
            "-c",
            ".",
          ],
          env: rt.env,
        }).output();
        assert.ok(copy.success, new TextDecoder().decode(copy.stderr));
        const apply = await new Deno.Command("git", {
          args: ["-C", clone, "apply", `${patchDir.path}/fix.patch`],
        }).output();
        assert.ok(apply.success, new TextDecoder().decode(apply.stderr));
        assert.equal(await Deno.readTextFile(`${clone}/notes.txt`), "fixed\n");
        includes(await Deno.readTextFile(`${clone}/calc.py`), "return a + b");
        // The image itself is untouched: a new container has the bug again.
        includes(
          await rt.cli(
            "run",
            "--rm",
            "--network",
            "none",
            "--entrypoint",
            "cat",
            rt.image,
            "/testbed/calc.py",
          ),
          "a - b",
        );
        assert.deepEqual(await rt.deftContainers(), []);
      },
    );

    await t.step(
      "--must-patch judges the diff inside: an empty one refuses task_done",
      async () => {
        const run = await runInContainer(rt, [
          [["task_done", {}]],
          [["bash", { command: "echo more >> /testbed/calc.py" }]],
        ], ["--must-patch"]);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.results[0].name, "task_done");
        assert.equal(run.results[0].success, false, JSON.stringify(run.results[0]));
        assert.ok(run.results.at(-1)?.success);
        const outside = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/tmp/deft-no-repo", {
          extra: ["--docker-image", rt.image, "--container-runtime", rt.name, "--must-patch"],
          env: rt.env,
        });
        assert.equal(outside.code, 2, outside.stderr);
        assert.ok(outside.stderr.includes("is not a folder in the image"), outside.stderr);
        // A host folder that is no repository, bound in: refused, named.
        await using plain = await tempDir();
        const noRepo = await runMocked({ url: "http://127.0.0.1:9" }, "t", plain.path, {
          extra: ["--docker-image", rt.image, "--container-runtime", rt.name, "--must-patch"],
          env: rt.env,
        });
        assert.equal(noRepo.code, 2, noRepo.stderr);
        assert.ok(noRepo.stderr.includes("in the container is not inside one"), noRepo.stderr);
        assert.deepEqual(await rt.deftContainers(), []);
      },
    );

    await t.step(
      "a tab-indented CRLF file and a Latin-1 one are edited byte-exactly inside",
      async () => {
        const run = await runInContainer(rt, [
          [["str_replace_based_edit_tool", {
            command: "str_replace",
            path: "/testbed/crlf_tabs.py",
            old_str: '\treturn "hello " + name',
            new_str: '\treturn "hi " + name',
          }]],
          [["bash", { command: "od -An -c crlf_tabs.py | tr -s ' '" }]],
          // A legacy encoding (Latin-1) keeps its bytes too.
          [["bash", { command: "printf 'caf\\351 = 1\\n' > latin.py" }]],
          [["str_replace_based_edit_tool", {
            command: "str_replace",
            path: "/testbed/latin.py",
            old_str: "café = 1",
            new_str: "café = 2",
          }]],
          [["bash", { command: "od -An -b latin.py | tr -s ' '" }]],
        ]);
        assert.deepEqual(run.code, 0, run.stderr);
        assert.ok(run.results[0].success, run.results[0].error ?? "");
        const bytes = (run.results[1].result ?? "").replace(/\s+/g, " ").trim();
        assert.deepEqual(
          bytes,
          'd e f g r e e t ( n a m e ) : \\r \\n \\t r e t u r n " h i " + n a m e \\r \\n',
        );
        assert.ok(run.results[3].success, run.results[3].error ?? "");
        assert.equal(run.results[4].result?.trim(), "143 141 146 351 040 075 040 062 012");
      },
    );

    await t.step("a TCP connect to a host listener on 127.0.0.1 fails", async () => {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      let accepted = 0;
      (async () => {
        for await (const conn of listener) {
          accepted++;
          conn.close();
        }
      })().catch(() => {});
      try {
        const port = (listener.addr as Deno.NetAddr).port;
        const run = await runInContainer(rt, [[["bash", {
          command:
            `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 3)" ` +
            "&& echo CONNECTED || echo REFUSED",
        }]]]);
        assert.deepEqual(run.code, 0, run.stderr);
        includes(run.results[0].result ?? "", "REFUSED");
        assert.deepEqual(accepted, 0);
      } finally {
        listener.close();
      }
    });

    await t.step("hostile commands and file names run nothing on the host", async () => {
      await using marks = await tempDir();
      const m = marks.path;
      const hostile = [
        `"; touch ${m}/a; echo "`,
        `$(touch ${m}/b)`,
        `\`touch ${m}/c\``,
        `'; touch ${m}/d #`,
      ];
      const run = await runInContainer(rt, [
        [["bash", { command: `touch ${m}/e; echo ${hostile.join(" ")}` }]],
        ...hostile.map((name, i): [string, unknown][] => [["str_replace_based_edit_tool", {
          command: "create",
          path: `/testbed/x${i}${name.replaceAll("/", "_")}`,
          file_text: name,
        }]]),
        [["bash", { command: "ls /testbed | wc -l" }]],
      ]);
      assert.deepEqual(run.code, 0, run.stderr);
      // The files exist inside under their literal names (4 created beside the repository's 3).
      assert.deepEqual(run.results.at(-2)?.result, "7\n");
      for (const r of run.results.slice(1, 5)) assert.ok(r.success, r.error ?? "");
      assert.deepEqual([...Deno.readDirSync(m)].map((e) => e.name), []);

      // A flag's value that would read as a runtime option is refused before anything runs.
      const bad = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/testbed", {
        extra: ["--docker-image", "-v/:/host", "--container-runtime", rt.name],
        env: rt.env,
      });
      assert.deepEqual(bad.code, 2, bad.stderr);
      includes(bad.stderr, "is not a plain name");
    });

    await t.step("--docker-keep leaves exactly one container and prints its id", async () => {
      const run = await runInContainer(rt, [[["bash", { command: "touch /testbed/kept-mark" }]]], [
        "--docker-keep",
      ]);
      assert.deepEqual(run.code, 0, run.stderr);
      const ids = await rt.deftContainers();
      assert.deepEqual(ids.length, 1);
      includes(run.stderr, `container kept: ${ids[0]}`);
      assert.deepEqual(
        await rt.cli("exec", ids[0], "ls", "/testbed/kept-mark"),
        "/testbed/kept-mark",
      );
      // A kept container is not a leftover: the next run's sweep leaves it alone.
      const next = await runInContainer(rt, [[["bash", { command: "true" }]]]);
      assert.deepEqual(next.code, 0, next.stderr);
      assert.deepEqual(await rt.deftContainers(), ids);
      // --docker-container-id attaches to it (Deft's runtime is bound in), never removes it.
      const mock = MockLLM.start([
        chatToolCalls([["bash", { command: "ls /testbed/kept-mark && pwd" }]]),
        chatToolCalls([["task_done", {}]]),
      ]);
      const attached = await runMocked(mock, "t", "/testbed", {
        extra: ["--docker-container-id", ids[0], "--container-runtime", rt.name, "--json"],
        env: rt.env,
      }).finally(() => mock.close());
      assert.equal(attached.code, 0, attached.stderr);
      includes(attached.stderr, `using container ${ids[0]}`);
      assert.deepEqual(await rt.deftContainers(), ids);
      await rt.cli("rm", "-f", ...(rt.name === "podman" ? ["-t", "0"] : []), ids[0]);
      // A container without Deft's runtime in it is refused, named.
      const plain = await rt.cli(
        "run",
        "-d",
        "--network",
        "none",
        "--entrypoint",
        "sleep",
        rt.image,
        "600",
      );
      try {
        const refused = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/testbed", {
          extra: ["--docker-container-id", plain, "--container-runtime", rt.name],
          env: rt.env,
        });
        assert.equal(refused.code, 2, refused.stderr);
        includes(refused.stderr, "Deft's runtime is not in the container");
      } finally {
        await rt.cli("rm", "-f", ...(rt.name === "podman" ? ["-t", "0"] : []), plain);
      }
    });

    await t.step(
      "the next start leaves containers that only carry Deft's labels (no proof)",
      async () => {
        const start = (owner: string) =>
          rt.cli(
            "run",
            "-d",
            "--network",
            "none",
            "--label",
            "deft.container=1",
            "--label",
            `deft.owner=${owner}`,
            "--entrypoint",
            "sleep",
            rt.image,
            "600",
          );
        // A pid no process has (above the kernel's pid_max), and this test's own pid with another
        // start time (the pid reused by a later process).
        const old = "Thu Jan  1 00:00:00 1970";
        const dead = await start(`${Deno.hostname()}/99999999/${old}`);
        const reused = await start(`${Deno.hostname()}/${Deno.pid}/${old}`);
        const foreign = await start(`another-host/99999999/${old}`);
        const run = await runInContainer(rt, [[["bash", { command: "true" }]]]);
        assert.equal(run.code, 0, run.stderr);
        // A pid and a host name prove nothing (another PID namespace, a copied label): all stay.
        // What is proven this install's is swept (hardening_test.ts).
        const left = await rt.cli("ps", "-a", "-q", "--no-trunc");
        for (const id of [dead, reused, foreign]) {
          assert.ok(left.includes(id), `${id} was swept: ${left}`);
        }
        await rt.cli(
          "rm",
          "-f",
          ...(rt.name === "podman" ? ["-t", "0"] : []),
          dead,
          reused,
          foreign,
        );
      },
    );

    await t.step("after Ctrl-C no container remains", async () => {
      await using dir = await tempDir();
      const { child, mock } = await startSleepingRun(rt, dir.path);
      try {
        child.kill("SIGINT");
        const status = await child.status;
        await child.stderr.cancel();
        assert.deepEqual(status.code, 130);
        assert.deepEqual(await rt.deftContainers(), []);
      } finally {
        await mock.close();
      }
    });

    await t.step("after SIGKILL of Deft no container remains", async () => {
      await using dir = await tempDir();
      const { child, mock } = await startSleepingRun(rt, dir.path);
      try {
        child.kill("SIGKILL");
        await child.status;
        await child.stderr.cancel();
        assert.ok(
          await eventually(async () => (await rt.deftContainers()).length === 0),
          `left behind: ${await rt.deftContainers()}`,
        );
      } finally {
        await mock.close();
      }
    });

    await t.step("a container that dies mid-run fails the step with that reason", async () => {
      await using dir = await tempDir();
      const mock = MockLLM.start([
        chatToolCalls([["bash", { command: "sleep 600" }]]),
        chatToolCalls([["bash", { command: "echo again" }]]),
        chatToolCalls([["task_done", {}]]),
      ]);
      try {
        const args = mockRunArgs(mock, "t", "/testbed", {
          extra: [
            "--docker-image",
            rt.image,
            "--container-runtime",
            rt.name,
            "-t",
            `${dir.path}/t.json`,
          ],
        });
        const child = new Deno.Command(Deno.execPath(), {
          args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args],
          env: { NO_COLOR: "1", ...rt.env },
          stdin: "null",
          stdout: "null",
          stderr: "piped",
        }).spawn();
        assert.ok(await eventually(async () => (await rt.deftContainers()).length === 1));
        await eventually(() => Promise.resolve(mock.requests.length >= 1));
        await new Promise((r) => setTimeout(r, 1500));
        const [id] = await rt.deftContainers();
        await rt.cli("rm", "-f", ...(rt.name === "podman" ? ["-t", "0"] : []), id);
        const out = await child.output();
        const stderr = new TextDecoder().decode(out.stderr);
        const results = await toolResults(`${dir.path}/t.json`);
        assert.equal(results[0].success, false, stderr);
        includes(results[0].error ?? "", "the container may have stopped");
        assert.equal(results[1].success, false, stderr);
        assert.deepEqual(await rt.deftContainers(), []);
      } finally {
        await mock.close();
      }
    });

    await t.step("a missing image, a missing workspace: clear errors, nothing left", async () => {
      const missing = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/testbed", {
        extra: ["--docker-image", "deft-test:no-such-tag", "--container-runtime", rt.name],
        env: rt.env,
      });
      assert.deepEqual(missing.code, 2, missing.stderr);
      includes(missing.stderr, "'deft-test:no-such-tag' is not in");
      includes(missing.stderr, `${rt.name} images`);
      const noDir = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/no/such/dir", {
        extra: ["--docker-image", rt.image, "--container-runtime", rt.name],
        env: rt.env,
      });
      assert.deepEqual(noDir.code, 2, noDir.stderr);
      includes(noDir.stderr, "the workspace /no/such/dir is not a folder in the image");
      assert.deepEqual(await rt.deftContainers(), []);
    });

    await t.step(
      "-w naming a host folder binds it at its path; no other host path shows",
      async () => {
        await using ws = await tempDir();
        await Deno.writeTextFile(`${ws.path}/f.txt`, "one\n");
        const mock = MockLLM.start([
          chatToolCalls([["str_replace_based_edit_tool", {
            command: "str_replace",
            path: `${ws.path}/f.txt`,
            old_str: "one",
            new_str: "two",
          }]]),
          chatToolCalls([["bash", {
            command: `pwd; ls ${REPO_ROOT} 2>&1 | head -1; ls /opt/deft; ls /testbed | head -1`,
          }]]),
          chatToolCalls([["task_done", {}]]),
        ]);
        try {
          const run = await runMocked(mock, "t", ws.path, {
            extra: ["--docker-image", rt.image, "--container-runtime", rt.name, "--json"],
            env: rt.env,
          });
          assert.equal(run.code, 0, run.stderr);
          assert.equal(await Deno.readTextFile(`${ws.path}/f.txt`), "two\n");
          const said = JSON.stringify(mock.requests.at(-1)?.body);
          includes(said, `${ws.path}\\n`);
          includes(said, "No such file or directory");
          includes(said, "code");
        } finally {
          await mock.close();
        }
        const root = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/", {
          extra: ["--docker-image", rt.image, "--container-runtime", rt.name],
          env: rt.env,
        });
        assert.equal(root.code, 2, root.stderr);
        includes(root.stderr, "does not bind into a container");
        assert.deepEqual(await rt.deftContainers(), []);
      },
    );

    await t.step("an image without glibc is named: Deft's runtime cannot start there", async () => {
      const image = await noGlibcImage(rt);
      // A folder not on the host, so nothing is bound: the runtime check comes before the
      // workspace's.
      const run = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/no-such-workspace", {
        extra: ["--docker-image", image, "--container-runtime", rt.name],
        env: rt.env,
      });
      assert.equal(run.code, 2, run.stderr);
      includes(run.stderr, `cannot start in the image '${image}'`);
      includes(run.stderr, "use a glibc-based image");
      assert.deepEqual(await rt.deftContainers(), []);
    });
  });
}

Deno.test("container: a Docker daemon that is down is named, with what to do", async () => {
  await using dir = await tempDir();
  const run = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/testbed", {
    extra: ["--docker-image", "debian:bookworm", "--container-runtime", "docker"],
    env: { DOCKER_HOST: `unix://${dir.path}/no.sock` },
  });
  assert.deepEqual(run.code, 2, run.stderr);
  includes(run.stderr, "no container runtime is usable (docker:");
  includes(run.stderr, "Start the Docker daemon");
});
