/**
 * Checkpoints with the tools in a container (real Podman): written inside the container, and
 * `/rewind` there brings every file back byte for byte — a `.gitattributes` with `eol=lf`
 * notwithstanding — while nothing is stored on the host.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { testRuntime } from "../../helpers/containers.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function modelArgs(mock: MockLLM): string[] {
  return ["-p", "openai_compatible", "-m", "mock", "--model-base-url", `${mock.url}/v1`, "-k", "k"];
}

Deno.test({
  name: "checkpoints (podman): taken inside the container; /rewind there restores exact bytes",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using rt = await testRuntime("podman");
  await using home = await tempDir();
  const state = `${home.path}/state`;
  const env = { ...rt.env, HOME: home.path, XDG_STATE_HOME: state };
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: "cd /testbed && printf '* text eol=lf\\n' > .gitattributes && " +
        "printf 'a\\r\\nb\\r\\n' > crlf.txt && chmod +x calc.py",
    }]]),
    chatText("turn one"),
    chatToolCalls([["bash", {
      command: "cd /testbed && printf 'changed\\n' > crlf.txt && rm calc.py && echo new > made.txt",
    }]]),
    chatText("turn two"),
    chatText("after the rewind"),
  ]);
  let id: string | undefined;
  try {
    const r = await runDeft(
      [
        "interactive",
        "--docker-image",
        rt.image,
        "--container-runtime",
        "podman",
        "--docker-keep",
        "-w",
        "/testbed",
        "--approval",
        "never",
        ...modelArgs(mock),
      ],
      { cwd: home.path, env, stdin: "one\ntwo\n/rewind 1 both\nwhat now\n" },
    );
    id = /container kept: ([0-9a-f]{64})/.exec(r.stderr)?.[1];
    assert.equal(r.code, 0, r.stderr);
    assert.ok(id, r.stderr);
    assert.match(r.stderr + r.stdout, /rewound the files and the conversation to checkpoint 1/);
    const sh = (script: string) => rt.cli("exec", id!, "sh", "-c", script);
    assert.equal(await sh("od -An -c /testbed/crlf.txt | tr -s ' '"), "a \\r \\n b \\r \\n");
    assert.equal(await sh("test -x /testbed/calc.py && echo x"), "x", "back, executable");
    assert.equal(await sh("test -e /testbed/made.txt || echo gone"), "gone");
    // The conversation was cut after turn 1.
    const sent: Json[] = mock.requests.at(-1)!.body.messages;
    assert.ok(JSON.stringify(sent).includes("turn one"));
    assert.ok(!JSON.stringify(sent).includes("turn two"));
    // The store is in the container; the host keeps none.
    const dir = `${state}/deft/trajectories`;
    const [name] = [...Deno.readDirSync(dir)].map((e) => e.name);
    const t = JSON.parse(await Deno.readTextFile(`${dir}/${name}`));
    assert.ok(t.checkpoints.every((c: Json) => c.store.startsWith("/tmp/deft/")), t.checkpoints);
    assert.equal(await sh(`test -d ${t.checkpoints[0].store}/objects && echo in`), "in");
    assert.equal(
      await Deno.stat(`${state}/deft/checkpoints`).then(() => true, () => false),
      false,
    );

    // Headless, in the same (kept) container: back to the session's start, then on from there.
    mock.push(chatText("went on"));
    const onward = await runDeft(
      [
        "run",
        "go on",
        "--continue",
        "--rewind-to",
        "0",
        "--docker-container-id",
        id,
        "--container-runtime",
        "podman",
        "-w",
        "/testbed",
        ...modelArgs(mock),
      ],
      { cwd: home.path, env },
    );
    assert.equal(onward.code, 0, onward.stderr);
    assert.equal(
      await sh(
        "cd /testbed && ls -a crlf.txt made.txt .gitattributes 2>&1 | wc -l; " +
          "test -x calc.py || echo plain; git status --porcelain",
      ),
      "3\nplain",
      "every file as at the session's start",
    );
    const went: Json[] = mock.requests.at(-1)!.body.messages;
    assert.deepEqual(went.map((m) => m.role), ["system", "user"]);
  } finally {
    await mock.close();
    if (id) await rt.cli("rm", "-f", id).catch(() => {});
  }
});
