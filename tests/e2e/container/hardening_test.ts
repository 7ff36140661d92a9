/**
 * What a hostile model inside a container cannot do to the host, and what Deft does to the
 * runtime's other containers and images (none of them its to touch), against real Docker (a
 * private daemon) and real Podman. Each check is made on this test's own folders, containers and
 * images only: another suite, or a user's Deft, may use the same runtime at the same time.
 */
import assert from "node:assert/strict";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { denoDir, mockRunArgs, REPO_ROOT, runMocked, trustedHome } from "../../helpers/deft.ts";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { tempDir } from "../../helpers/temp.ts";
import { type TestRuntime, testRuntime } from "../../helpers/containers.ts";

interface ToolResult {
  name: string;
  success: boolean;
  result: string | null;
  error: string | null;
}

/** `deft run` with the tools in a container of `rt`'s image, the model scripted by `calls`. */
async function deftIn(
  rt: TestRuntime,
  workspace: string,
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
    const run = await runMocked(mock, "t", workspace, {
      extra: ["--container-runtime", rt.name, "-t", trajectory, ...extra],
      env: { ...rt.env, ...env },
    });
    let results: ToolResult[] = [];
    try {
      const data = JSON.parse(await Deno.readTextFile(trajectory));
      // deno-lint-ignore no-explicit-any
      results = data.agent_steps.flatMap((s: any) => s.tool_results ?? []);
    } catch {
      // No trajectory: the run did not start.
    }
    return { ...run, results };
  } finally {
    await mock.close();
  }
}

/** Removes containers of this test's, by id. */
async function removeContainers(rt: TestRuntime, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await rt.cli("rm", "-f", ...(rt.name === "podman" ? ["-t", "0"] : []), ...ids).catch(() => {});
}

/** The container id `container kept: ID` names in Deft's output. */
function keptId(stderr: string): string {
  const id = /container kept: ([0-9a-f]+)/.exec(stderr)?.[1];
  assert.ok(id, `no kept container named in:\n${stderr}`);
  return id;
}

/** Every command line running in container `id`, from its /proc. */
async function processesIn(rt: TestRuntime, id: string): Promise<string[]> {
  const said = await rt.cli(
    "exec",
    id,
    "sh",
    "-c",
    'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done 2>/dev/null',
  );
  return said.split("\n").map((l) => l.trim()).filter(Boolean);
}

/** The HMAC (hex) Deft's ownership proof is: of `message` under `secret`. */
async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signed = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message));
  return [...new Uint8Array(signed)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Every path under `dir` (no link followed) that is a device or carries a set-id bit. */
async function dangerous(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    const info = await Deno.lstat(path);
    if (info.isBlockDevice || info.isCharDevice) found.push(`${path} (device)`);
    else if (!info.isSymlink && ((info.mode ?? 0) & 0o6000) !== 0) {
      found.push(`${path} (mode ${(info.mode ?? 0).toString(8)})`);
    }
    if (info.isDirectory) found.push(...await dangerous(path));
  }
  return found;
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `container (${runtime}): the host, and the runtime's other things, are safe from a run`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);

    await t.step(
      "a bound host folder gets no setuid program and no device node from root inside",
      async () => {
        await using ws = await tempDir();
        const w = ws.path;
        const run = await deftIn(rt, w, [[["bash", {
          command: [
            // A root-owned copy of a program, made setuid every way a program can.
            `cp /bin/ls ${w}/suid; chmod u+s ${w}/suid; chmod 4755 ${w}/suid; chmod g+s ${w}/suid`,
            `python3 -c "import os; os.close(os.open('${w}/made', os.O_CREAT | os.O_WRONLY, 0o4755))"`,
            `python3 -c "import os; os.mknod('${w}/node', 0o104755)"`,
            `tar -C /bin -cf /tmp/t.tar ls && tar --same-permissions -C ${w} -xf /tmp/t.tar`,
            `mknod ${w}/mem c 1 1; mknod ${w}/disk b 8 0; chmod 666 ${w}/mem ${w}/disk`,
            `ls -l ${w}; echo done`,
          ].join("; "),
        }]]], ["--docker-image", rt.image]);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.results[0]?.result ?? "", /done\n$/, JSON.stringify(run.results));
        // The copy itself is there (the folder is the model's to write), without the bit.
        assert.ok((await Deno.lstat(`${w}/suid`)).isFile);
        assert.deepEqual(await dangerous(w), []);
      },
    );

    await t.step("the docker client's configured proxies do not reach the container", async () => {
      const home = await trustedHome();
      try {
        await Deno.mkdir(`${home}/.docker`);
        await Deno.writeTextFile(
          `${home}/.docker/config.json`,
          JSON.stringify({
            proxies: {
              default: {
                httpProxy: "http://proxy-canary.invalid:3128",
                httpsProxy: "http://user:secret-canary@proxy.invalid:3128",
                noProxy: "no-proxy-canary",
              },
            },
          }),
        );
        const run = await deftIn(rt, "/testbed", [[["bash", { command: "env; echo done" }]]], [
          "--docker-image",
          rt.image,
        ], {
          HOME: home,
          // Podman's own way in: the client's variables (Deft hands it none of them).
          HTTP_PROXY: "http://env-proxy-canary.invalid:1",
          https_proxy: "http://env-proxy-canary.invalid:1",
          // Deft's own calls to the mock model go direct.
          NO_PROXY: "127.0.0.1,localhost",
          no_proxy: "127.0.0.1,localhost",
        });
        assert.equal(run.code, 0, run.stderr);
        const env = run.results[0]?.result ?? "";
        assert.match(env, /done\n$/);
        assert.ok(!/canary/i.test(env), env);
      } finally {
        await Deno.remove(home, { recursive: true });
      }
    });

    await t.step(
      "with --docker-keep, nothing the session started runs on in the kept container",
      async () => {
        const run = await deftIn(rt, "/testbed", [[["bash", {
          command: "setsid env -i sh -c 'sleep 611' </dev/null >/dev/null 2>&1 & " +
            "sleep 612 </dev/null >/dev/null 2>&1 & disown; sleep 1; echo started",
        }]]], ["--docker-image", rt.image, "--docker-keep"]);
        assert.equal(run.code, 0, run.stderr);
        const id = keptId(run.stderr);
        try {
          assert.equal(run.results[0]?.result, "started\n");
          const left = await processesIn(rt, id);
          assert.ok(!left.some((p) => /sleep 61[12]/.test(p)), left.join("\n"));
          // Its keeper still runs: the container is there to go on in.
          assert.ok(left.some((p) => /^cat\b/.test(p)), left.join("\n"));
        } finally {
          await removeContainers(rt, [id]);
        }
      },
    );

    await t.step(
      "from a source tree without node_modules: the tools get their packages, the code is read-only",
      async () => {
        // A copy of Deft's source (so a broken promise writes to the copy, never the real tree),
        // started as from a read-only tree: no node_modules, the packages from Deno's cache.
        await using tree = await tempDir("deft-src-");
        const copied = await new Deno.Command("sh", {
          args: [
            "-c",
            'tar -C "$1" --exclude=./node_modules --exclude=./.git -cf - . | tar -C "$2" -xf -',
            "sh",
            REPO_ROOT,
            tree.path,
          ],
        }).output();
        assert.ok(copied.success, new TextDecoder().decode(copied.stderr));
        const main = `${tree.path}/main.ts`;
        const before = await Deno.readTextFile(main);
        await using dir = await tempDir();
        await Deno.writeTextFile(
          `${dir.path}/config.yaml`,
          [
            "model_providers: { mock: { provider: openai_compatible } }",
            "models: { main: { model_provider: mock, model: mock-model } }",
            "agents: { deft_agent: { model: main, tools: [bash, ckg, str_replace_based_edit_tool, task_done] } }",
          ].join("\n") + "\n",
        );
        const mock = MockLLM.start([
          chatToolCalls([["bash", {
            command: "ls /opt/deft/code/main.ts && (echo x >> /opt/deft/code/main.ts; " +
              "touch /opt/deft/code/planted) 2>&1; echo done",
          }]]),
          chatToolCalls([["ckg", {
            command: "search_function",
            path: "/testbed",
            identifier: "add",
          }]]),
          // A legacy encoding: the editor loads its codec packages (npm) for it.
          chatToolCalls([["bash", { command: "printf 'caf\\351 = 1\\n' > /testbed/latin.py" }]]),
          chatToolCalls([["str_replace_based_edit_tool", {
            command: "str_replace",
            path: "/testbed/latin.py",
            old_str: "café = 1",
            new_str: "café = 2",
          }]]),
          chatToolCalls([["bash", { command: "od -An -b /testbed/latin.py | tr -s ' '" }]]),
          chatToolCalls([["task_done", {}]]),
        ]);
        try {
          const args = mockRunArgs(mock, "t", "/testbed", {
            extra: [
              "--docker-image",
              rt.image,
              "--container-runtime",
              rt.name,
              "--config-file",
              `${dir.path}/config.yaml`,
              "-t",
              `${dir.path}/t.json`,
            ],
          });
          const out = await new Deno.Command(Deno.execPath(), {
            args: ["run", ...deftFlags(), "--node-modules-dir=none", main, ...args],
            cwd: dir.path,
            env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...rt.env },
          }).output();
          const stderr = new TextDecoder().decode(out.stderr);
          assert.equal(out.code, 0, stderr);
          assert.ok(!(await exists(`${tree.path}/node_modules`)), "Deno made node_modules");
          const data = JSON.parse(await Deno.readTextFile(`${dir.path}/t.json`));
          // deno-lint-ignore no-explicit-any
          const results = data.agent_steps.flatMap((s: any) => s.tool_results ?? []);
          const said = results[0]?.result ?? "";
          assert.match(said, /^\/opt\/deft\/code\/main\.ts\n/, JSON.stringify(results));
          assert.match(said, /Read-only file system[\s\S]*Read-only file system/, said);
          assert.equal(await Deno.readTextFile(main), before);
          assert.ok(!(await exists(`${tree.path}/planted`)));
          // The code graph loads its packages lazily: they are inside too.
          assert.ok(results[1]?.success, JSON.stringify(results[1]));
          assert.match(results[1]?.result ?? "", /calc\.py/, JSON.stringify(results[1]));
          assert.ok(results[3]?.success, JSON.stringify(results[3]));
          assert.equal(results[4]?.result?.trim(), "143 141 146 351 040 075 040 062 012");
        } finally {
          await mock.close();
        }
      },
    );

    await t.step("-w naming a host symlink to a system folder is refused, not bound", async () => {
      await using dir = await tempDir();
      await Deno.symlink("/usr", `${dir.path}/project`);
      await Deno.symlink("/", `${dir.path}/root`);
      for (const link of ["project", "root"]) {
        const run = await runMocked({ url: "http://127.0.0.1:9" }, "t", `${dir.path}/${link}`, {
          extra: ["--docker-image", rt.image, "--container-runtime", rt.name],
          env: rt.env,
        });
        assert.equal(run.code, 2, run.stderr);
        assert.ok(run.stderr.includes("does not bind into a container"), run.stderr);
      }
    });

    await t.step(
      "container.memory and container.keep in the user's config shape a deft run's container",
      async () => {
        const home = await trustedHome();
        try {
          await Deno.writeTextFile(
            `${home}/.config/deft/config.yaml`,
            `container:\n  memory: 96m\n  keep: true\n`,
            { append: true },
          );
          const run = await deftIn(rt, "/testbed", [[["bash", { command: "echo in" }]]], [
            "--docker-image",
            rt.image,
          ], { HOME: home });
          assert.equal(run.code, 0, run.stderr);
          const id = keptId(run.stderr);
          try {
            const memory = await rt.cli("inspect", "--format", "{{.HostConfig.Memory}}", id);
            assert.equal(Number(memory), 96 * 1024 * 1024);
          } finally {
            await removeContainers(rt, [id]);
          }
        } finally {
          await Deno.remove(home, { recursive: true });
        }
      },
    );

    await t.step(
      "with --docker-keep, a start that fails leaves no container and no built image",
      async () => {
        await using dir = await tempDir();
        const mark = randomHex(8);
        await Deno.writeTextFile(
          `${dir.path}/Dockerfile`,
          `FROM ${rt.image}\nLABEL deft.test.mark=${mark}\n`,
        );
        const run = await runMocked({ url: "http://127.0.0.1:9" }, "t", "/no/such/folder", {
          extra: [
            "--dockerfile-path",
            `${dir.path}/Dockerfile`,
            "--docker-keep",
            "--container-runtime",
            rt.name,
          ],
          env: rt.env,
        });
        assert.equal(run.code, 2, run.stderr);
        assert.ok(run.stderr.includes("is not a folder in"), run.stderr);
        // The image's label is every container's of it too: neither is left.
        const filter = ["--filter", `label=deft.test.mark=${mark}`];
        assert.equal(await rt.cli("ps", "-a", "-q", ...filter), "");
        assert.equal(await rt.cli("images", "-q", ...filter), "");
      },
    );

    await t.step(
      "--docker-image-file leaves the user's own tag on the user's image",
      async () => {
        await using dir = await tempDir();
        const name = `deft-test-user-${randomHex(4)}:mine`;
        const mark = randomHex(8);
        await Deno.writeTextFile(
          `${dir.path}/Dockerfile`,
          `FROM ${rt.image}\nLABEL deft.test.mark=${mark}\n`,
        );
        // The archive's image is named as the user's own image is.
        await rt.cli("build", "-q", "-t", name, "-f", `${dir.path}/Dockerfile`, dir.path);
        const archived = await rt.cli("image", "inspect", "--format", "{{.Id}}", name);
        await rt.cli("save", "-o", `${dir.path}/image.tar`, name);
        await rt.cli("image", "rm", name);
        await rt.cli("tag", rt.image, name);
        const users = await rt.cli("image", "inspect", "--format", "{{.Id}}", name);
        try {
          assert.notEqual(archived, users);
          const run = await deftIn(rt, "/testbed", [[["bash", { command: "echo in" }]]], [
            "--docker-image-file",
            `${dir.path}/image.tar`,
          ]);
          assert.equal(run.code, 0, run.stderr);
          assert.equal(run.results[0]?.result, "in\n");
          assert.equal(await rt.cli("image", "inspect", "--format", "{{.Id}}", name), users);
          // The loaded image was new to the runtime: it is gone with the run.
          assert.equal(
            await rt.cli("images", "-q", "--filter", `label=deft.test.mark=${mark}`),
            "",
          );
        } finally {
          await rt.cli("image", "rm", name).catch(() => {});
          await rt.cli("image", "rm", "-f", archived).catch(() => {});
        }
      },
    );

    await t.step(
      "the sweep removes only a proven leftover of this install whose run is over",
      async () => {
        await using cache = await tempDir();
        const env = { DEFT_CACHE_DIR: cache.path };
        // A first run makes the install's secret.
        const first = await deftIn(rt, "/testbed", [[["bash", { command: "true" }]]], [
          "--docker-image",
          rt.image,
        ], env);
        assert.equal(first.code, 0, first.stderr);
        const secret = (await Deno.readTextFile(`${cache.path}/containers/secret`)).trim();
        assert.equal(((await Deno.stat(`${cache.path}/containers/secret`)).mode ?? 0) & 0o077, 0);
        const start = async (name: string, labels: Record<string, string>) =>
          await rt.cli(
            "run",
            "-d",
            "--name",
            name,
            "--network",
            "none",
            ...Object.entries({ "deft.container": "1", ...labels }).flatMap(([k, v]) => [
              "--label",
              `${k}=${v}`,
            ]),
            "--entrypoint",
            "sleep",
            rt.image,
            "600",
          );
        const stamped = async (kind: string, name: string, run: string) => ({
          [`deft.${kind === "image" ? "image." : ""}run`]: run,
          [`deft.${kind === "image" ? "image." : ""}proof`]: await hmacHex(
            secret,
            `${kind}:${name}:${run}`,
          ),
        });
        const tag = randomHex(4);
        // Deft's labels copied onto a user's container: no valid proof.
        const copied = await start(`user-${tag}`, {
          "deft.run": randomHex(16),
          "deft.proof": randomHex(32),
        });
        // A live Deft's (its run's lock held, as a Deft in another PID namespace holds it).
        const liveRun = randomHex(16);
        const lock = await Deno.open(`${cache.path}/containers/runs/${liveRun}.lock`, {
          create: true,
          write: true,
        });
        await lock.lock(true);
        const live = await start(
          `deft-live-${tag}`,
          await stamped("container", `deft-live-${tag}`, liveRun),
        );
        // This install's, its run over (a lock file nobody holds), and one whose file is gone.
        const overRun = randomHex(16);
        await Deno.writeTextFile(`${cache.path}/containers/runs/${overRun}.lock`, "");
        const orphan = await start(
          `deft-orphan-${tag}`,
          await stamped("container", `deft-orphan-${tag}`, overRun),
        );
        const goneRun = randomHex(16);
        const orphan2 = await start(
          `deft-gone-${tag}`,
          await stamped("container", `deft-gone-${tag}`, goneRun),
        );
        // A proof made for another name does not prove this one.
        const moved = await start(
          `deft-moved-${tag}`,
          await stamped("container", `deft-orphan-${tag}`, overRun),
        );
        // Images alike: copied labels stay, a proven leftover goes.
        await using build = await tempDir();
        const image = async (name: string, labels: Record<string, string>) => {
          await Deno.writeTextFile(
            `${build.path}/Dockerfile`,
            `FROM ${rt.image}\nLABEL ${
              Object.entries({ "deft.image": "1", ...labels }).map(([k, v]) => `${k}=${v}`).join(
                " ",
              )
            }\n`,
          );
          await rt.cli("build", "-q", "-t", name, "-f", `${build.path}/Dockerfile`, build.path);
          return await rt.cli("image", "inspect", "--format", "{{.Id}}", name);
        };
        const userImage = await image(`user-image-${tag}:1`, {
          "deft.image.run": overRun,
          "deft.image.proof": randomHex(32),
        });
        const orphanImage = await image(
          `deft-built-orphan-${tag}:latest`,
          await stamped("image", `deft-built-orphan-${tag}:latest`, overRun),
        );
        const mine = [copied, live, orphan, orphan2, moved];
        try {
          const run = await deftIn(rt, "/testbed", [[["bash", { command: "true" }]]], [
            "--docker-image",
            rt.image,
          ], env);
          assert.equal(run.code, 0, run.stderr);
          const left = (await rt.cli("ps", "-a", "-q", "--no-trunc")).split("\n");
          const has = (id: string) => left.some((l) => l && (id.startsWith(l) || l.startsWith(id)));
          assert.ok(has(copied), "a user's container with Deft's labels was removed");
          assert.ok(has(live), "a live Deft's container was removed");
          assert.ok(has(moved), "a container with another's proof was removed");
          assert.ok(!has(orphan), "this install's leftover was not removed");
          assert.ok(!has(orphan2), "this install's leftover (lock file gone) was not removed");
          const images = await rt.cli("images", "-q", "--no-trunc");
          const hasImage = (id: string) => images.includes(id.replace(/^sha256:/, ""));
          assert.ok(hasImage(userImage), "a user's image with Deft's labels was removed");
          assert.ok(!hasImage(orphanImage), "this install's leftover image was not removed");
        } finally {
          lock.close();
          await removeContainers(rt, mine);
          await rt.cli("image", "rm", "-f", userImage, orphanImage).catch(() => {});
        }
      },
    );
  });
}
