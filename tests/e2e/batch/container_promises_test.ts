/**
 * What `deft batch` promises about its containers, observed on the real ones (real Docker with a
 * private daemon, real Podman), not on the argv Deft builds: a line cannot make a folder outside
 * the task file's the build context; a task's container and builds follow
 * `container.allow_network` (what the container's `RUN` steps and shell can then see), never the
 * top-level `allow_network`; the task's container carries `deft.task=ID`; `--docker-keep` keeps a
 * `--dockerfile-path` build, and a start that fails leaves neither container nor built image; a
 * `deft run` killed before writing its patch still gets the patch of what the agent edited, or a
 * clear "none" and no prediction. Everything is found by this run's own labels and names, so
 * another suite on the same runtime never counts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT, runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import {
  fixAddCall,
  processesWith,
  recordedCall,
  recordedTrajectory,
} from "../../helpers/batch_fixture.ts";
import { noGlibcImage, type TestRuntime, testRuntime } from "../../helpers/containers.ts";

/** A recording on /testbed: fixes calc.py, then (with `sleep`) runs a long command. */
function trajectory(sleep?: number) {
  const steps = [fixAddCall("/testbed", 1)];
  if (sleep) steps.push(recordedCall("bash", { command: `sleep ${sleep}` }, 2));
  return recordedTrajectory("Fix add.", "/testbed", steps);
}

/** Full ids of the containers the batch writing to `out` started (its label), running or not. */
async function batchContainers(rt: TestRuntime, out: string, task?: string): Promise<string[]> {
  const filters = ["--filter", `label=deft.batch=${out}`];
  if (task) filters.push("--filter", `label=deft.task=${task}`);
  return (await rt.cli("ps", "-a", "-q", "--no-trunc", ...filters)).split("\n").filter(Boolean);
}

/** Ids of the images carrying this test's own label value (set by its Dockerfiles). */
async function labelledImages(rt: TestRuntime, value: string): Promise<string[]> {
  return (await rt.cli("images", "-q", "--filter", `label=deft.test.run=${value}`))
    .split("\n").filter(Boolean);
}

function readResult(out: string, id: string): Record<string, unknown> {
  return JSON.parse(Deno.readTextFileSync(join(out, id, "result.json")));
}

function predictions(out: string): Record<string, string>[] {
  const text = (() => {
    try {
      return Deno.readTextFileSync(join(out, "predictions.jsonl"));
    } catch {
      return "";
    }
  })();
  return text.trimEnd().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** The network interfaces a command inside sees, sorted: `lo` alone means no network. */
function interfaces(listing: string): string[] {
  return listing.split(/\s+/).filter(Boolean).sort();
}

async function waitFor(what: string, ok: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.fail(`${what} never happened`);
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `batch (${runtime}): containers as promised, seen from inside and by inspect`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);
    await using dir = await tempDir("deft-batch-promises-");
    const run = crypto.randomUUID().slice(0, 8);
    const env = { ...rt.env, HOME: dir.path };
    await Deno.writeTextFile(join(dir.path, "fix.json"), JSON.stringify(trajectory()));
    await Deno.writeTextFile(join(dir.path, "fix-hang.json"), JSON.stringify(trajectory(7344)));
    const writeTasks = async (name: string, lines: Record<string, unknown>[]) => {
      const file = join(dir.path, name);
      await Deno.writeTextFile(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
      return file;
    };
    const writeConfig = async (name: string, text: string) => {
      const file = join(dir.path, name);
      await Deno.writeTextFile(file, text);
      return file;
    };
    const batchArgs = (file: string, out: string, ...more: string[]) => [
      "batch",
      file,
      "--out",
      out,
      "--container-runtime",
      runtime,
      "--output-format",
      "json",
      ...more,
    ];
    const batch = (file: string, out: string, ...more: string[]) =>
      runDeft(batchArgs(file, out, ...more), { env, cwd: dir.path });
    // A build that records the network its RUN steps saw, and carries a label of this run.
    const dockerfile = async (folder: string, label: string) => {
      await Deno.mkdir(join(dir.path, folder), { recursive: true });
      await Deno.writeTextFile(
        join(dir.path, folder, "Dockerfile"),
        `FROM ${rt.image}\nLABEL deft.test.run=${label}\n` +
          "RUN ls /sys/class/net > /build-net.txt\n",
      );
    };
    // Read by `ls`: Deno reads /sys only with --allow-all.
    const hostInterfaces = interfaces(
      new TextDecoder().decode(
        new Deno.Command("ls", { args: ["/sys/class/net"], stdout: "piped" }).outputSync().stdout,
      ),
    );
    // The machine's own interfaces: not the ones other containers come and go with.
    const hostOwn = hostInterfaces.filter((n) =>
      n !== "lo" && !/^(veth|podman|docker|br-|cni|vnet)/.test(n)
    );
    assert.ok(hostOwn.length > 0, `this machine has a network: ${hostInterfaces}`);
    const sawHostNetwork = (listing: string) => {
      const seen = interfaces(listing);
      assert.ok(hostOwn.every((n) => seen.includes(n)), `saw ${seen}, not all of ${hostOwn}`);
    };
    const cleanup: (() => Promise<unknown>)[] = [];

    try {
      await t.step(
        "a line's Dockerfile outside the task file's folder: refused before any build",
        async () => {
          // The attacker's task file: its lines point the build at a folder holding a secret.
          const label = `${run}-escape`;
          const outside = join(dir.path, "outside");
          const tasks = join(dir.path, "escape");
          await Deno.mkdir(join(tasks, "sub"), { recursive: true });
          await Deno.mkdir(outside);
          await Deno.writeTextFile(join(outside, ".env"), "DEFT_TEST_MARKER=leaked\n");
          await Deno.writeTextFile(
            join(outside, "Dockerfile"),
            `FROM ${rt.image}\nLABEL deft.test.run=${label}\nCOPY .env /leaked.env\n`,
          );
          await Deno.symlink(join(outside, "Dockerfile"), join(tasks, "Dockerfile"));
          await Deno.symlink(outside, join(tasks, "sub", "link"));
          const test = "cat /leaked.env";
          const file = join(tasks, "t.jsonl");
          await Deno.writeTextFile(
            file,
            [
              { id: "up", dockerfile: "../outside/Dockerfile", replay: "../fix.json", test },
              { id: "abs", dockerfile: join(outside, "Dockerfile"), replay: "../fix.json", test },
              { id: "link", dockerfile: "Dockerfile", replay: "../fix.json", test },
              { id: "dirlink", dockerfile: "sub/link/Dockerfile", replay: "../fix.json", test },
            ].map((l) => JSON.stringify(l)).join("\n") + "\n",
          );
          const out = join(dir.path, "out-escape");
          const refused = await batch(file, out);
          assert.equal(refused.code, 2, refused.stderr);
          assert.match(refused.stderr, /4 bad line\(s\); nothing was started/);
          for (const [n, why] of [[1, "names"], [2, "names"], [3, "leads"], [4, "leads"]]) {
            assert.match(
              refused.stderr,
              new RegExp(`t\\.jsonl:${n}: "dockerfile" \\S+ ${why} .*outside the task file's`),
            );
          }
          assert.deepEqual(await labelledImages(rt, label), [], "nothing was built");
          for (const id of ["up", "abs", "link", "dirlink"]) {
            assert.equal(await Deno.stat(join(out, id)).then(() => true, () => false), false);
          }
        },
      );

      await t.step(
        "--dockerfile-path --docker-keep, top-level allow_network only: no network anywhere, " +
          "the build and the container kept, labelled with the task",
        async () => {
          const label = `${run}-keep`;
          await dockerfile("image-keep", label);
          // A line's own build, beside the default one.
          await dockerfile("keep/image-line", `${run}-line`);
          cleanup.push(async () => {
            for (const value of [label, `${run}-line`]) {
              for (const id of await labelledImages(rt, value)) await rt.cli("rmi", "-f", id);
            }
          });
          const config = await writeConfig(
            "top-network.yaml",
            "allow_network: true\ncontainer:\n  allow_network: false\n",
          );
          const out = join(dir.path, "out-keep");
          cleanup.push(async () => {
            const left = await batchContainers(rt, out);
            if (left.length) await rt.cli("rm", "-f", ...left);
          });
          // The task file in a folder of its own: --dockerfile-path, the user's own flag, may
          // name a Dockerfile outside it; the line's must be inside.
          const file = await writeTasks("keep/keep.jsonl", [
            { id: "k1", task: "Fix add.", replay: "../fix.json", test: "python3 test_calc.py" },
            { id: "k2", dockerfile: "image-line/Dockerfile", replay: "../fix.json", test: "true" },
          ]);
          const ran = await batch(
            file,
            out,
            "--dockerfile-path",
            "image-keep/Dockerfile",
            "--docker-keep",
            "--config-file",
            config,
          );
          assert.equal(ran.code, 0, ran.stderr);
          const result = readResult(out, "k1");
          const image = result.image as string;
          assert.match(image, /^deft-built-/);
          // The build is kept: the image is there, under the name the result records.
          assert.ok(
            await rt.cli("image", "inspect", image).then(() => true, () => false),
            `the kept build ${image} is gone`,
          );
          assert.equal((await labelledImages(rt, label)).length, 1);
          // The line's own build is kept with its container too.
          assert.equal((await labelledImages(rt, `${run}-line`)).length, 1);
          const ids = ["k1", "k2"].map((task) => readResult(out, task).container_id as string);
          assert.deepEqual((await batchContainers(rt, out)).sort(), [...ids].sort());
          for (const [task, id] of [["k1", ids[0]], ["k2", ids[1]]]) {
            const labels = JSON.parse(
              await rt.cli("inspect", "-f", "{{json .Config.Labels}}", id),
            );
            assert.equal(labels["deft.task"], task);
            assert.equal(labels["deft.batch"], out);
            // The task's container: no network, whatever the top-level allow_network says.
            assert.equal(await rt.cli("inspect", "-f", "{{.HostConfig.NetworkMode}}", id), "none");
            assert.deepEqual(interfaces(await rt.cli("exec", id, "ls", "/sys/class/net")), ["lo"]);
            // The build's RUN steps had none either.
            assert.deepEqual(
              interfaces(await rt.cli("exec", id, "cat", "/build-net.txt")),
              ["lo"],
            );
          }
        },
      );

      await t.step(
        "container.allow_network: a line's build and its container get the host's network",
        async () => {
          const label = `${run}-net`;
          await dockerfile("image-net", label);
          cleanup.push(async () => {
            for (const id of await labelledImages(rt, label)) await rt.cli("rmi", "-f", id);
          });
          const config = await writeConfig(
            "container-network.yaml",
            "allow_network: false\ncontainer:\n  allow_network: true\n",
          );
          const out = join(dir.path, "out-net");
          cleanup.push(async () => {
            const left = await batchContainers(rt, out);
            if (left.length) await rt.cli("rm", "-f", ...left);
          });
          const file = await writeTasks("net.jsonl", [
            { id: "n1", dockerfile: "image-net/Dockerfile", replay: "fix.json", test: "true" },
          ]);
          const ran = await batch(file, out, "--docker-keep", "--config-file", config);
          assert.equal(ran.code, 0, ran.stderr);
          const id = readResult(out, "n1").container_id as string;
          assert.equal(await rt.cli("inspect", "-f", "{{.HostConfig.NetworkMode}}", id), "host");
          sawHostNetwork(await rt.cli("exec", id, "ls", "/sys/class/net"));
          sawHostNetwork(await rt.cli("exec", id, "cat", "/build-net.txt"));
        },
      );

      await t.step(
        "--docker-keep and a start that fails: no container and no built image left",
        async () => {
          const label = `${run}-fail`;
          await dockerfile("image-fail", label);
          const noGlibc = await noGlibcImage(rt);
          await Deno.mkdir(join(dir.path, "image-noglibc"));
          await Deno.writeTextFile(
            join(dir.path, "image-noglibc", "Dockerfile"),
            `FROM ${noGlibc}\nLABEL deft.test.run=${label}\n`,
          );
          cleanup.push(async () => {
            for (const id of await labelledImages(rt, label)) await rt.cli("rmi", "-f", id);
          });
          const out = join(dir.path, "out-fail");
          cleanup.push(async () => {
            const left = await batchContainers(rt, out);
            if (left.length) await rt.cli("rm", "-f", ...left);
          });
          const file = await writeTasks("fail.jsonl", [
            // The build works; the workdir is not in it.
            {
              id: "nowork",
              dockerfile: "image-fail/Dockerfile",
              workdir: "/no/such/folder",
              replay: "fix.json",
            },
            // The build works; Deft cannot start in it (no glibc).
            { id: "noglibc", dockerfile: "image-noglibc/Dockerfile", replay: "fix.json" },
          ]);
          const ran = await batch(file, out, "--docker-keep");
          assert.equal(ran.code, 1, ran.stderr);
          const nowork = readResult(out, "nowork");
          assert.equal(nowork.status, "error");
          assert.match(nowork.error as string, /workdir \/no\/such\/folder is not a folder/);
          assert.equal("container_id" in nowork, false);
          assert.equal(readResult(out, "noglibc").status, "error");
          assert.deepEqual(await batchContainers(rt, out), []);
          assert.deepEqual(await labelledImages(rt, label), [], "a built image was left");
          // A task that never ran has no patch, and no prediction that would look like one.
          assert.equal(nowork.patch, "none");
          assert.deepEqual(predictions(out), []);
        },
      );

      await t.step(
        "deft run killed before writing its patch: the patch of the edit, or none at all",
        async () => {
          const out = join(dir.path, "out-killed");
          const file = await writeTasks("killed.jsonl", [
            { id: "rescued", task: "Fix add.", replay: "fix-hang.json" },
            { id: "lost", task: "Fix add.", replay: "fix-hang.json" },
          ]);
          const child = new Deno.Command(Deno.execPath(), {
            args: [
              "run",
              ...deftFlags(),
              `${REPO_ROOT}main.ts`,
              ...batchArgs(file, out, "--docker-image", rt.image, "--concurrency", "2"),
            ],
            cwd: dir.path,
            env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...env },
            stdin: "null",
            stdout: "piped",
            stderr: "piped",
          }).spawn();
          const output = child.output();
          cleanup.push(async () => {
            const left = await batchContainers(rt, out);
            if (left.length) await rt.cli("rm", "-f", ...left);
          });
          // The task's `deft run` is the one writing that task's patch.
          const runOf = (id: string) =>
            processesWith(`--patch-path ${join(out, id, "patch.diff")}`);
          await waitFor(
            "both tasks' long command",
            () => processesWith("sleep 7344").length >= 2,
          );
          const [rescued] = runOf("rescued");
          const [lost] = runOf("lost");
          assert.ok(rescued && lost, "each task's deft run is found");
          // The edit is in; the run dies before it ends. One container stays to compute the
          // patch in; the other goes with its run (frozen first, so it cannot write one).
          Deno.kill(lost, "SIGSTOP");
          const [lostContainer] = await batchContainers(rt, out, "lost");
          await rt.cli("rm", "-f", lostContainer);
          Deno.kill(lost, "SIGKILL");
          Deno.kill(rescued, "SIGKILL");
          const ended = await output;
          const stderr = new TextDecoder().decode(ended.stderr);
          assert.equal(ended.code, 1, stderr);

          const saved = readResult(out, "rescued");
          assert.equal(saved.status, "error", JSON.stringify(saved));
          assert.equal(saved.patch, "recovered");
          const patch = await Deno.readTextFile(join(out, "rescued", "patch.diff"));
          assert.match(patch, /^diff --git a\/calc\.py b\/calc\.py\n/);
          assert.ok(patch.includes("\n-    return a - b\n+    return a + b\n"), patch);

          const gone = readResult(out, "lost");
          assert.equal(gone.status, "error", JSON.stringify(gone));
          assert.equal(gone.patch, "none");
          assert.equal(
            await Deno.stat(join(out, "lost", "patch.diff")).then(() => true, () => false),
            false,
            "no empty patch.diff for a patch nobody could compute",
          );

          // predictions.jsonl: the rescued edit, and no line at all for the lost one.
          const lines = predictions(out);
          assert.deepEqual(lines.map((p) => p.instance_id), ["rescued"]);
          assert.equal(lines[0].model_patch, patch);
          assert.deepEqual(await batchContainers(rt, out), []);
          assert.deepEqual(processesWith("sleep 7344"), []);
        },
      );
    } finally {
      for (const step of cleanup.reverse()) await step().catch(() => {});
    }
  });
}
