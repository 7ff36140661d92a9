/**
 * `@path` in an interactive session whose tools run in a container (real Podman, the test image):
 * the mention is judged against the workspace as the container sees it (`-w /testbed` inside) and
 * read in there, never on the host where that path is another file or none. A path outside the
 * workspace, a FIFO and a link leading out are refused; Tab completes over the container's files.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { denoDir } from "../../helpers/deft.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { tempDir } from "../../helpers/temp.ts";
import { testRuntime } from "../../helpers/containers.ts";
import { mockModelArgs as modelArgs } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

// deno-lint-ignore no-explicit-any
function lastUser(body: any): string {
  // deno-lint-ignore no-explicit-any
  return body.messages.filter((m: any) => m.role === "user").at(-1).content;
}

Deno.test({
  name: "interactive in a container (podman): @path is checked and read inside the container",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using rt = await testRuntime("podman");
  await using home = await tempDir();
  const env = {
    ...rt.env,
    HOME: home.path,
    XDG_STATE_HOME: `${home.path}/state`,
    DENO_DIR: denoDir(),
  };
  // The host has no such workspace: a host-side read could only fail or read something else.
  await assert.rejects(Deno.stat("/testbed/calc.py"), Deno.errors.NotFound);
  const setup = "mkdir -p /testbed/src && printf 'inside = 42\\n' > /testbed/src/only_inside.py" +
    " && mkfifo /testbed/pipe && ln -s /etc/passwd /testbed/out_link" +
    " && ln -s src/only_inside.py /testbed/in_link";
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: setup }]]),
    chatText("Set up."),
    chatText("Read them."),
  ]);
  try {
    const flags = ["--docker-image", rt.image, "--container-runtime", rt.name, "-w", "/testbed"];
    const r = await runDeftInPty(
      ["interactive", ...modelArgs(mock), ...flags, "--approval", "never"],
      [
        { expect: "deft> ", send: "set up" + ENTER },
        { expect: "Set up\\.[\\s\\S]*deft> ", send: "explain @src/only_in", delay: 0.3 },
        { expect: "@src/only_in", send: "\t", delay: 0.5 },
        {
          expect: "side\\.py",
          send: " @in_link @/etc/hostname @pipe @out_link @../etc/passwd" + ENTER,
          delay: 0.5,
        },
        { expect: "Read them\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
        { expect: "bye" },
      ],
      { cwd: home.path, env, timeoutSeconds: 120 },
    );
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.match(out, /attached @src\/only_inside\.py \(1 line\(s\), 12 bytes\)/);
    assert.match(out, /attached @in_link \(1 line\(s\), 12 bytes\)/);
    assert.match(out, /not attached: @\/etc\/hostname: it is outside the workspace/);
    assert.match(out, /not attached: @\.\.\/etc\/passwd: it is outside the workspace/);
    assert.match(out, /not attached: @pipe: it is not a regular file/);
    assert.match(out, /not attached: @out_link: it leads outside the workspace/);
    const prompt = lastUser(mock.requests[2].body);
    assert.match(
      prompt,
      /<attached-file path="src\/only_inside\.py">\ninside = 42\n<\/attached-file>/,
    );
    assert.equal(prompt.match(/<attached-file/g)?.length, 2);
    assert.doesNotMatch(prompt, /root:x:0:0/);
  } finally {
    await mock.close();
  }
});
