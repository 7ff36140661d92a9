/**
 * A process started with the flags of a worker's permission set can start that worker, whatever
 * folders the set may write (issue 36, finding 12). Deno withholds from a process that may run
 * only named programs the right to write those programs' files, so `--allow-write=/usr
 * --allow-run=bash` holds less than "write /usr", and such a process could not give a worker the
 * set it was started for: the sandboxed tool host died with "Can't escalate parent thread
 * permissions" for a workspace at /, /usr or /usr/bin.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { permissionFlags } from "../../../src/policy/grants.ts";
import { tempDir } from "../../helpers/temp.ts";

// Starts a worker with the set it is given and says whether that worked.
const PARENT = `
const permissions = JSON.parse(Deno.args[0]);
const url = URL.createObjectURL(new Blob(["self.postMessage('up')"], { type: "text/javascript" }));
try {
  const worker = new Worker(url, { type: "module", deno: { permissions } });
  worker.onmessage = () => { console.log("started"); worker.terminate(); };
} catch (e) {
  console.log(String(e));
}
`;

Deno.test("the flags of a worker's set let a process start that worker, for any workspace", async () => {
  await using dir = await tempDir("deft-grant-");
  const script = join(dir.path, "parent.ts");
  await Deno.writeTextFile(script, PARENT);
  for (const workspace of ["/", "/usr", "/usr/bin", dir.path]) {
    const permissions: Deno.PermissionOptionsObject = {
      read: [workspace, dir.path],
      write: [workspace],
      run: ["bash", "bwrap", "git"],
      net: false,
      env: true,
      sys: false,
      ffi: false,
      import: false,
    };
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--unstable-worker-options",
        "--no-prompt",
        ...permissionFlags(permissions),
        script,
        JSON.stringify(permissions),
      ],
      stdin: "null",
    }).output();
    const said = new TextDecoder().decode(out.stdout).trim() +
      new TextDecoder().decode(out.stderr).trim();
    assert.equal(said, "started", `workspace ${workspace}: ${said}`);
  }
});
