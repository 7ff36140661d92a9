/**
 * A container's start overlaps its tool host's: Deft starts the host inside (over `exec`, its boot
 * message sent) while it checks the container, and the session's first tool link takes that host
 * instead of starting a second one. A host no link took goes with the container, and leaves
 * nothing in a kept one. Against real Docker (a private daemon) and real Podman, on the cached
 * test image (no `ps` there: processes are read from /proc).
 */
import assert from "node:assert/strict";
import { openContainer } from "../../../src/container/container.ts";
import {
  containerLinkStarter,
  createHostedTools,
  TOOL_HOST_COMMAND,
  workerEntry,
} from "../../../src/tools/host/mod.ts";
import { ToolExecutor } from "../../../src/tools/executor.ts";
import { noGlibcImage, type TestRuntime, testRuntime } from "../../helpers/containers.ts";

/** How many tool hosts run in `id` (the pattern matches no command line of its own). */
async function hosts(rt: TestRuntime, id: string): Promise<number> {
  const out = await rt.cli(
    "exec",
    id,
    "sh",
    "-c",
    "grep -al '__tool-hos[t]' /proc/[0-9]*/cmdline | wc -l",
  );
  return Number(out.trim());
}

/** Runs `f` with the runtime's variables (its daemon, its private cache) set for Deft's client. */
async function withEnv<T>(rt: TestRuntime, f: () => Promise<T>): Promise<T> {
  const saved = Object.keys(rt.env).map((k) => [k, Deno.env.get(k)] as const);
  for (const [k, v] of Object.entries(rt.env)) Deno.env.set(k, v);
  try {
    return await f();
  } finally {
    for (const [k, v] of saved) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  }
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `container (${runtime}): the tool host starts with the container, once`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);
    const open = (keep = false) =>
      openContainer(
        { runtime, image: rt.image, workingDir: "/testbed", keep },
        workerEntry(),
        TOOL_HOST_COMMAND,
      );

    await t.step(
      "it runs before any tool exists, and the first call is answered by it",
      () =>
        withEnv(rt, async () => {
          const container = await open();
          const executor = new ToolExecutor(
            await createHostedTools(
              { provider: "openai", workspace: container.workspace, settings: { sandbox: "none" } },
              ["bash"],
              {},
              await containerLinkStarter(container),
            ),
          );
          try {
            assert.equal(await hosts(rt, container.id), 1, "no tool host was started early");
            const result = await executor.executeToolCall({
              name: "bash",
              call_id: "c",
              arguments: { command: "pwd; echo $((6 * 7))" },
            });
            assert.ok(result.success, result.error ?? undefined);
            assert.equal(result.output?.trim(), "/testbed\n42");
            assert.equal(await hosts(rt, container.id), 1, "a second tool host was started");
          } finally {
            await executor.closeTools();
            await container.close();
          }
          assert.deepEqual(await rt.deftContainers(), [], "the container is left");
        }),
    );

    await t.step("a host no link took goes with the container", () =>
      withEnv(rt, async () => {
        const container = await open();
        await container.close();
        assert.deepEqual(await rt.deftContainers(), [], "the container is left");
      }));

    await t.step("a failed check is named, and nothing is left", () =>
      withEnv(rt, async () => {
        await assert.rejects(
          openContainer(
            { runtime, image: rt.image, workingDir: "/nowhere" },
            workerEntry(),
            TOOL_HOST_COMMAND,
          ),
          /the workspace \/nowhere is not a folder in the image/,
        );
        await assert.rejects(
          openContainer(
            { runtime, image: await noGlibcImage(rt), workingDir: "/no-such-workspace" },
            workerEntry(),
            TOOL_HOST_COMMAND,
          ),
          /Deft's runtime \(Deno, linked against glibc\) cannot start/,
        );
        assert.deepEqual(await rt.deftContainers(), [], "a container is left");
      }));

    await t.step("a kept container keeps no tool host no link took", () =>
      withEnv(rt, async () => {
        const container = await open(true);
        try {
          assert.equal(await hosts(rt, container.id), 1);
          await container.close();
          assert.equal(await hosts(rt, container.id), 0, "the early host lives on");
        } finally {
          await rt.cli("rm", "-f", container.id);
        }
      }));
  });
}
