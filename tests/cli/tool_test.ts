/**
 * `deft tool task_done '{}'` and `deft tools` are on every pipeline's start-up path: what they
 * load before answering must not start Node's compatibility layer (the first `node:` module costs
 * every start ~6 ms) nor load an npm package (issue 39, item 1).
 */
import assert from "node:assert/strict";
import { loadedModules } from "../helpers/imports.ts";

/** What main.ts loads for a pipeline command line, then the command and the in-process tool. */
const PIPELINE_PATH = [
  "../../main.ts",
  "../../src/cli/io.ts",
  "../../src/cli/invocation_dir.ts",
  "../../src/tools/worker_scope.ts",
  "../../src/tools/host/entry_points.ts",
  "../../src/cli/fast.ts",
  "../../src/cli/dispatch.ts",
  "../../src/cli/tool.ts",
  "../../src/cli/tools.ts",
  "../../src/tools/registry.ts",
  "../../src/tools/in_process.ts",
  "../../src/tools/task_done.ts",
].map((path) => new URL(path, import.meta.url));

Deno.test("deft tool task_done and deft tools load no node: or npm module", () => {
  const { files, outside } = loadedModules(PIPELINE_PATH);
  assert.deepEqual(outside, [], "each node: or npm module here costs every `deft tool` start");
  assert.ok(files.length > 20, `the walk found the modules (${files.length})`);
});

Deno.test("main.ts reaches the pipeline path through the modules listed here", () => {
  // A module main.ts starts loading for `deft tool` that the list above misses would go unchecked.
  const main = Deno.readTextFileSync(PIPELINE_PATH[0]);
  const listed = new Set(PIPELINE_PATH.map((u) => u.href));
  const onPath = [
    "./src/cli/io.ts",
    "./src/cli/invocation_dir.ts",
    "./src/tools/worker_scope.ts",
    "./src/tools/host/entry_points.ts",
    "./src/cli/fast.ts",
    "./src/cli/dispatch.ts",
  ];
  for (const path of onPath) {
    assert.ok(main.includes(`import("${path}")`), `main.ts no longer imports ${path}`);
    assert.ok(listed.has(new URL(path, PIPELINE_PATH[0]).href), path);
  }
  const dispatch = Deno.readTextFileSync(new URL("../../src/cli/dispatch.ts", import.meta.url));
  for (const path of ["./tool.ts", "./tools.ts"]) {
    assert.ok(dispatch.includes(`import("${path}")`), `dispatch.ts no longer imports ${path}`);
  }
});

Deno.test("a sandboxed deft tool call loads no node: or npm module to start its host, nor does the host's start", () => {
  // Deft's side (the sandboxed host's launch) and the host's own start inside bubblewrap: each
  // process would start Node's compatibility layer for its first node: module.
  const { outside } = loadedModules([
    ...PIPELINE_PATH,
    new URL("../../src/tools/host/sandboxed.ts", import.meta.url),
    new URL("../../src/tools/host/relay.ts", import.meta.url),
    new URL("../../src/tools/host/worker.ts", import.meta.url),
  ]);
  assert.deepEqual(outside, [], "each node: or npm module here costs every sandboxed `deft tool`");
});
