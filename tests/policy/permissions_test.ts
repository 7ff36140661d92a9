import assert from "node:assert/strict";
import { explainDenial, toolPermissions } from "../../src/policy/permissions.ts";
import { runDeft } from "../helpers/deft.ts";

Deno.test("the tool permission set: workspace and Deft dirs only, bash/bwrap/git, no network", () => {
  const perms = toolPermissions({ workspace: "/ws", cache: "/c", temp: "/t" });
  assert.deepEqual(perms.read, ["/ws", "/c", "/t"]);
  assert.deepEqual(perms.write, ["/ws", "/c", "/t"]);
  assert.deepEqual(perms.run, ["bash", "bwrap", "git"]);
  assert.equal(perms.net, false);
  assert.equal(perms.ffi, false);
});

Deno.test("inside the tool worker, Deno itself refuses reads, writes, fetches and programs", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir());
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("secret"),
  );
  try {
    const worker = new Worker(
      new URL("../fixtures/policy/probe_worker.ts", import.meta.url).href,
      { type: "module", deno: { permissions: toolPermissions({ workspace }) } } as WorkerOptions,
    );
    const report = await new Promise<Record<string, string>>((resolve) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.postMessage({ workspace, url: `http://127.0.0.1:${server.addr.port}/` });
    });
    worker.terminate();
    assert.equal(report["write workspace"], "allowed");
    assert.equal(report["run bash"], "allowed");
    assert.match(report["read /etc/passwd"], /NotCapable: Requires read access to "\/etc\/passwd"/);
    assert.match(report["write /etc"], /NotCapable: Requires write access/);
    assert.match(report["fetch"], /NotCapable: Requires net access/);
    assert.match(report["run curl"], /NotCapable: Requires run access to "curl"/);
    assert.match(
      explainDenial(report["fetch"], workspace)!,
      /Network access \(127\.0\.0\.1:\d+\) is not allowed for tools/,
    );
    assert.match(
      explainDenial(report["read /etc/passwd"], workspace)!,
      new RegExp(`/etc/passwd is outside the workspace ${workspace}`),
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("deft tool: reading /etc/passwd and writing through an escaping symlink are refused", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir());
  const outside = await Deno.realPath(await Deno.makeTempDir());
  await Deno.writeTextFile(`${outside}/target.json`, '{"a": 1}\n');
  await Deno.symlink(outside, `${workspace}/escape`);
  await Deno.symlink(`${outside}/target.json`, `${workspace}/link.json`);
  const call = (name: string, args: unknown) =>
    runDeft(["tool", name, JSON.stringify(args), "-w", workspace]);

  const passwd = await call("str_replace_based_edit_tool", {
    command: "view",
    path: "/etc/passwd",
  });
  assert.equal(passwd.code, 1);
  assert.match(JSON.parse(passwd.stdout).error, /leaves the workspace|outside the workspace/);

  const create = await call("str_replace_based_edit_tool", {
    command: "create",
    path: `${workspace}/escape/new.txt`,
    file_text: "x",
  });
  assert.equal(create.code, 1);
  assert.match(JSON.parse(create.stdout).error, /leaves the workspace/);
  await assert.rejects(Deno.stat(`${outside}/new.txt`));

  const json = await call("json_edit_tool", {
    operation: "set",
    file_path: `${workspace}/link.json`,
    json_path: "$.a",
    value: 2,
  });
  assert.equal(json.code, 1);
  assert.match(JSON.parse(json.stdout).error, /leaves the workspace|outside the workspace/);
  assert.equal(await Deno.readTextFile(`${outside}/target.json`), '{"a": 1}\n');
  assert.equal(json.stderr.includes("Stack"), false);
});
