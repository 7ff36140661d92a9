import assert from "node:assert/strict";
import { explainDenial, toolPermissions } from "../../../src/policy/permissions.ts";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("the tool permission set: workspace and Deft dirs only, bash/bwrap/git (unshare/setpriv), no network", () => {
  const perms = toolPermissions({ workspace: "/ws", cache: "/c", temp: "/t" });
  assert.deepEqual(perms.read, ["/ws", "/c", "/t"]);
  assert.deepEqual(perms.write, ["/ws", "/c", "/t"]);
  assert.deepEqual(perms.run, ["bash", "bwrap", "git", "unshare", "setpriv"]);
  assert.equal(perms.net, false);
  assert.equal(perms.ffi, false);
});

Deno.test("inside the tool worker, Deno itself refuses reads, writes, fetches and programs", async () => {
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("secret"),
  );
  try {
    const worker = new Worker(
      new URL("../../fixtures/policy/probe_worker.ts", import.meta.url).href,
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
  await using workspaceTemp = await tempDir();
  const workspace = workspaceTemp.path;
  await using outsideTemp = await tempDir();
  const outside = outsideTemp.path;
  await Deno.writeTextFile(`${outside}/target.json`, '{"a": 1}\n');
  await Deno.symlink(outside, `${workspace}/escape`);
  await Deno.symlink(`${outside}/target.json`, `${workspace}/link.json`);
  // Without a sandbox: the tool's own check and the worker's permissions are the walls here.
  const call = (name: string, args: unknown) =>
    runDeft(["tool", name, JSON.stringify(args), "-w", workspace, "--sandbox", "none"]);

  const passwd = await call("str_replace_based_edit_tool", {
    command: "view",
    path: "/etc/passwd",
  });
  assert.equal(passwd.code, 1);
  // The tool's own containment check refuses first ("leaves the workspace"); the worker's Deno
  // permissions ("is outside the workspace", tested in worker_fence_test.ts) are the second wall.
  assert.match(JSON.parse(passwd.stdout).error, /^The path \/etc\/passwd leaves the workspace/);

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
  assert.match(
    JSON.parse(json.stdout).error,
    /leaves the workspace \S+: it resolves to .* through a symbolic link/,
  );
  assert.equal(await Deno.readTextFile(`${outside}/target.json`), '{"a": 1}\n');
  assert.equal(json.stderr.includes("Stack"), false);
});

Deno.test("the worker's set is what tools need intersected with Deft's own grant", async () => {
  await using wsDir = await tempDir();
  const ws = wsDir.path;
  const src = new URL("../../../src", import.meta.url).pathname;
  const probe = new URL("../../fixtures/policy/grant_probe.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      `--allow-read=${ws},${src},${probe}`,
      `--allow-write=${ws}`,
      "--allow-run=bash",
      probe,
      ws,
      "/cache",
      "/tmp-private",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const { permissions, missing } = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.deepEqual(permissions.read, [ws]);
  assert.deepEqual(permissions.write, [ws]);
  assert.deepEqual(permissions.run, ["bash"]);
  assert.equal(permissions.env, false);
  assert.equal(permissions.net, false);
  for (const flag of ["--allow-run=bwrap", "--allow-run=git", "--allow-env"]) {
    assert.ok(missing.includes(flag), `${flag} in ${missing}`);
  }
  assert.ok(missing.includes("--allow-write=/cache"), String(missing));
});

Deno.test("denials name the layer, and the flag when Deft itself lacks the grant", () => {
  const dirs = { cache: "/c", temp: "/t" };
  assert.match(
    explainDenial('NotCapable: Requires run access to "bash"', "/ws", dirs)!,
    /^bash needs --allow-run=bash: Deft was started without it/,
  );
  assert.match(
    explainDenial('NotCapable: Requires write access to "/ws/a/.x.tmp"', "/ws", dirs)!,
    /start Deft with --allow-write=\/ws \(or a folder above it\)\. \[refused by Deno's permissions\]/,
  );
  assert.match(
    explainDenial('NotCapable: Requires write access to "/t/deft-bash-1/run"', "/ws", dirs)!,
    /--allow-write=\/t /,
  );
  assert.match(
    explainDenial('NotCapable: Requires read access to "/etc/shadow"', "/ws", dirs)!,
    /outside the workspace \/ws.*\[refused by Deno's permissions of the tool worker\]/,
  );
  assert.match(
    explainDenial('NotCapable: Requires write access to "/ws/f"', "/ws", { readOnly: true })!,
    /workspace is read-only/,
  );
  assert.match(
    explainDenial('NotCapable: Requires env access to "TMPDIR"', "/ws")!,
    /--allow-env/,
  );
  const readOnly = toolPermissions({ workspace: "/ws", cache: "/c", temp: "/t", readOnly: true });
  assert.deepEqual(readOnly.write, ["/c", "/t"]);
  assert.deepEqual(readOnly.read, ["/ws", "/c", "/t"]);
});
