/**
 * The editor through the client's file system keeps the sandbox still while the client acts,
 * and fails closed: a client that never answers gets the shells stopped while still frozen and
 * a clear error, with the sandbox running again after; a freeze that cannot be made (a process in
 * the sandbox asked for I/O signals, which could continue it) leaves the call to the disk editor,
 * and the client is never asked. This test process stands for Deft; its sandbox, for the shell's.
 */
import assert from "node:assert/strict";
import { type ClientFs, ClientFsEditor } from "../../../src/acp/client_fs.ts";
import { ok, Tool, type ToolExecResult } from "../../../src/tools/base.ts";
import { fileSize, pause, racerSandbox } from "../../helpers/sandbox_racer.ts";
import { tempDir } from "../../helpers/temp.ts";

class DiskEditor extends Tool {
  readonly name = "str_replace_based_edit_tool";
  readonly description = "disk";
  readonly parameters = [];
  calls = 0;
  execute(): Promise<ToolExecResult> {
    this.calls++;
    return Promise.resolve(ok("on disk"));
  }
}

const sandbox = racerSandbox;
const size = fileSize;

Deno.test("acp client fs: a client that never answers gets the shells stopped while frozen", async () => {
  await using dir = await tempDir("deft-acp-late-");
  const workspace = await Deno.realPath(dir.path);
  const file = `${workspace}/a.txt`;
  await Deno.writeTextFile(file, "disk\n");
  const tick = `${workspace}/ticks`;
  const child = sandbox(workspace, `while :; do (printf x >> ${tick}); done`);
  try {
    while (await size(tick) < 5) await pause(20);
    let stoppedWhileFrozen: boolean | undefined;
    const fs: ClientFs = {
      read: () => new Promise<string>(() => {}),
      write: () => Promise.resolve(),
      stopShells: async () => {
        const before = await size(tick);
        await pause(150);
        stoppedWhileFrozen = await size(tick) === before;
      },
    };
    const disk = new DiskEditor({ provider: "openai", workspace, settings: {} });
    const editor = new ClientFsEditor(disk, () => fs, { answerMs: 500 });
    const result = await editor.execute({ command: "view", path: file });
    assert.match(result.error ?? "", /did not answer within 0\.5 s/);
    assert.match(result.error ?? "", /shell was stopped/);
    assert.equal(stoppedWhileFrozen, true, "the shells were stopped after the thaw");
    assert.equal(disk.calls, 0);
    const after = await size(tick);
    await pause(300);
    assert.ok(await size(tick) > after, "the sandbox was left stopped");
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
});

Deno.test({
  name: "acp client fs: a freeze that cannot be made leaves the call to the disk editor",
  ignore: !(await Deno.stat("/usr/bin/python3").then(() => true, () => false)),
}, async () => {
  await using dir = await tempDir("deft-acp-nofreeze-");
  const workspace = await Deno.realPath(dir.path);
  const file = `${workspace}/a.txt`;
  await Deno.writeTextFile(file, "disk\n");
  const ready = `${workspace}/ready`;
  // A pipe set to signal on I/O: a signal Deft could not stop could continue the process.
  const child = sandbox(
    workspace,
    `exec python3 -c "import fcntl, os, time; r, w = os.pipe(); ` +
      `fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC); open('${ready}', 'w').close(); time.sleep(60)"`,
  );
  try {
    while (!await Deno.stat(ready).then(() => true, () => false)) await pause(20);
    const asked: string[] = [];
    const fs: ClientFs = {
      read: (path) => {
        asked.push(path);
        return Promise.resolve("buffer\n");
      },
      write: () => Promise.resolve(),
    };
    const disk = new DiskEditor({ provider: "openai", workspace, settings: {} });
    const editor = new ClientFsEditor(disk, () => fs);
    const result = await editor.execute({ command: "view", path: file });
    assert.equal(disk.calls, 1);
    assert.deepEqual(asked, []);
    assert.match(result.output ?? "", /^on disk\n\(The editor's buffer was not used: /);
    assert.match(result.output ?? "", /asked for I\/O signals/);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
});
