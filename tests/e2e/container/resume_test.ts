/**
 * `--continue` and `--resume` with the tools in a container, against real Docker (a private
 * daemon) and real Podman: a session recorded in a container of the test image is found by the
 * next run in a container of that image (never a host session of the same path, never the other
 * way round), its conversation goes on in a NEW container (the earlier one's files are gone, and
 * one line says so), and the picker lists the container's sessions.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { mockRunArgs, runDeft, runMocked } from "../../helpers/deft.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { tempDir } from "../../helpers/temp.ts";
import { testRuntime } from "../../helpers/containers.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";

function includes(text: string, part: string | RegExp): void {
  const found = typeof part === "string" ? text.includes(part) : part.test(text);
  assert.ok(found, `expected ${String(part)} in:\n${text}`);
}

// deno-lint-ignore no-explicit-any
type Json = any;

async function trajectories(state: string): Promise<Json[]> {
  const dir = `${state}/deft/trajectories`;
  const found: Json[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.name.endsWith(".json")) {
      found.push(JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`)));
    }
  }
  return found.sort((a, b) => a.start_time.localeCompare(b.start_time));
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `container (${runtime}): --continue and --resume find the container's sessions`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);
    await using home = await tempDir();
    const state = `${home.path}/state`;
    const env = { ...rt.env, HOME: home.path, XDG_STATE_HOME: state };
    const flags = ["--docker-image", rt.image, "--container-runtime", rt.name, "-w", "/testbed"];
    const run = async (mock: MockLLM, task: string, extra: string[]) =>
      await runMocked(mock, task, "/testbed", { extra: [...flags.slice(0, 4), ...extra], env });
    // Other tests share the Podman: a container is looked for by its id.
    const exists = (id: string) => rt.cli("container", "inspect", id).then(() => true, () => false);

    let first: Json;
    await t.step("a run in a container records its container; it stops unfinished", async () => {
      const mock = MockLLM.start([
        chatToolCalls([["bash", {
          command: "echo from-the-first > /testbed/note.txt && cat /testbed/note.txt",
        }]]),
      ]);
      const r = await run(mock, "leave a note", ["--max-steps", "1"]).finally(() => mock.close());
      assert.equal(r.code, 1, r.stderr);
      [first] = await trajectories(state);
      assert.equal(first.working_dir, "/testbed");
      assert.equal(first.container.runtime, rt.name);
      assert.equal(first.container.image, rt.image);
      assert.match(first.container.id, /^[0-9a-f]{64}$/);
      // A host session of the same path, newer: a container run must not take it.
      const host = { ...first, session_id: "hostsession_1", start_time: new Date().toISOString() };
      delete host.container;
      await Deno.writeTextFile(
        `${state}/deft/trajectories/trajectory_hostsession_1.json`,
        JSON.stringify(host),
      );
    });

    await t.step(
      "--continue goes on in a new container of the image, and says its files are fresh",
      async () => {
        const mock = MockLLM.start([
          chatToolCalls([["bash", { command: "cat /testbed/note.txt" }]]),
          chatText("The note is gone: this is a new container."),
        ]);
        // No task: the session goes on with its own.
        const args = mockRunArgs(mock, "-", "/testbed", {
          extra: [...flags.slice(0, 4), "--continue"],
        });
        args.splice(1, 1);
        const r = await runDeft(args, { env }).finally(() => mock.close());
        assert.equal(r.code, 0, r.stderr);
        includes(r.stderr, `resuming session ${first.session_id}`);
        includes(r.stderr, /goes on in container [0-9a-f]{12}, not in the one it was recorded in/);
        includes(r.stderr, "changes are not here");
        // The model got the first session's conversation, its tool result included.
        const sent = JSON.stringify(mock.requests[0].body.messages);
        includes(sent, "leave a note");
        includes(sent, "from-the-first");
        // The earlier container's file is not in the new one.
        const all = await trajectories(state);
        const second = all.find((d) => d.resumed_from?.session_id === first.session_id)!;
        assert.ok(second, JSON.stringify(all.map((d) => d.session_id)));
        assert.equal(second.container.image, rt.image);
        assert.notEqual(second.container.id, first.container.id);
        const cat = second.agent_steps[0].tool_results[0];
        assert.equal(cat.success, false, JSON.stringify(cat));
        includes(`${cat.result}${cat.error}`, "No such file");
        assert.equal(await exists(first.container.id), false);
        assert.equal(await exists(second.container.id), false);
      },
    );

    await t.step(
      "a host session is not resumed in a container, nor a container's on the host",
      async () => {
        const mock = MockLLM.start([chatText("never")]);
        try {
          const r = await run(mock, "go on", ["--resume", "hostsession_1"]);
          assert.equal(r.code, 2, r.stderr);
          includes(r.stderr, "recorded on the host");
          const id = /started container ([0-9a-f]{12})/.exec(r.stderr)?.[1];
          assert.ok(id, r.stderr);
          assert.equal(await exists(id), false, "the container went with the refusal");
          await using dir = await tempDir();
          const onHost = await runMocked(mock, "go on", dir.path, {
            extra: ["--resume", first.session_id],
            env,
          });
          assert.equal(onHost.code, 2, onHost.stderr);
          // Another path: refused for its folder; the container's own path on the host is refused
          // for its container (the unit tests cover the same path).
          includes(onHost.stderr, "cannot resume");
          assert.equal(mock.requests.length, 0);
        } finally {
          await mock.close();
        }
      },
    );

    await t.step(
      "in a kept container, attached again by its short id, the files go on too",
      async () => {
        const mock = MockLLM.start([
          chatToolCalls([["bash", { command: "echo kept-here > /testbed/kept.txt" }]]),
        ]);
        const kept = await run(mock, "keep a note", ["--docker-keep", "--max-steps", "1"])
          .finally(() => mock.close());
        assert.equal(kept.code, 1, kept.stderr);
        const id = /container kept: ([0-9a-f]{64})/.exec(kept.stderr)?.[1];
        assert.ok(id, kept.stderr);
        try {
          const next = MockLLM.start([
            chatToolCalls([["bash", { command: "cat /testbed/kept.txt" }]]),
            chatText("Still there."),
          ]);
          const args = mockRunArgs(next, "-", "/testbed", {
            extra: [
              "--docker-container-id",
              id.slice(0, 12),
              "--container-runtime",
              rt.name,
              "--continue",
            ],
          });
          args.splice(1, 1);
          const r = await runDeft(args, { env }).finally(() => next.close());
          assert.equal(r.code, 0, r.stderr);
          includes(r.stderr, "resuming session");
          assert.ok(!r.stderr.includes("not in the one it was recorded in"), r.stderr);
          includes(JSON.stringify(next.requests[0].body.messages), "keep a note");
          includes(JSON.stringify(next.requests[1].body.messages), "kept-here");
          const last = (await trajectories(state)).at(-1);
          // The attached container's image, as the runtime names it (podman: localhost/…).
          assert.match(last.container.image ?? "", /deft-test/);
        } finally {
          await rt.cli("rm", "-f", ...(rt.name === "podman" ? ["-t", "0"] : []), id);
        }
      },
    );

    if (runtime === "docker") {
      await t.step("interactive --resume lists the container's sessions only", async () => {
        const mock = MockLLM.start([chatText("Resumed in the container.")]);
        try {
          const r = await runDeftInPty([
            "interactive",
            ...mockModelArgs(mock),
            ...flags,
            "--resume",
          ], [
            // first, second, the kept one and its sequel; the host session is not offered.
            { expect: "resume which\\? \\(1-4\\D", send: "4\r" },
            { expect: "deft> ", send: "and now?\r" },
            { expect: "Resumed in the container\\.[\\s\\S]*deft> ", send: "\x04" },
            { expect: "bye" },
          ], { cwd: home.path, env, timeoutSeconds: 120 });
          const out = plain(r.output);
          assert.equal(r.failed, null, out);
          assert.equal(r.code, 0, out);
          includes(out, "leave a note");
          assert.ok(!out.includes("hostsession_1"), out);
          includes(out, `resumed session ${first.session_id}`);
          includes(JSON.stringify(mock.requests[0].body.messages), "from-the-first");
        } finally {
          await mock.close();
        }
      });
    }
  });
}
