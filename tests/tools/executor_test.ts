import assert from "node:assert/strict";
import { fail, ok } from "../../src/tools/base.ts";
import { CATALOG } from "../../src/tools/catalog.ts";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { type Host, StandInTool } from "../../src/tools/stand_in.ts";
import { FakeTool, testContext } from "../helpers/tools.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("lookup ignores case and underscores", async () => {
  const executor = new ToolExecutor([new FakeTool("str_replace_based_edit_tool", [])]);
  for (
    const name of [
      "STR_REPLACE_BASED_EDIT_TOOL",
      "strreplacebasededittool",
      "Str_Replace_Based_Edit_Tool",
    ]
  ) {
    const result = await executor.executeToolCall({ name, call_id: "1", arguments: {} });
    assert.equal(result.success, true);
    assert.equal(result.name, "str_replace_based_edit_tool");
  }
});

Deno.test("an unknown tool gets the Trae message listing the tools", async () => {
  const executor = new ToolExecutor([new FakeTool("bash", []), new FakeTool("task_done", [])]);
  const result = await executor.executeToolCall({ name: "Nope", call_id: "c1", arguments: {} });
  assert.deepEqual(result, {
    name: "Nope",
    call_id: "c1",
    success: false,
    output: null,
    error: "Tool 'Nope' not found. Available tools: [bash, task_done]",
    error_code: -1,
  });
});

Deno.test("a throwing tool becomes a failed result", async () => {
  const executor = new ToolExecutor([
    new FakeTool("boom", [], () => {
      throw new Error("kaboom");
    }),
  ]);
  const result = await executor.executeToolCall({ name: "boom", call_id: "x", arguments: {} });
  assert.equal(result.success, false);
  assert.equal(result.error, "Error executing tool 'boom': kaboom");
});

Deno.test("success follows error_code, and call ids are echoed", async () => {
  const executor = new ToolExecutor([
    new FakeTool("warn", [], () => ({ output: "o", error: "a warning", error_code: 0 })),
    new FakeTool("bad", [], () => fail("nope", 2)),
  ]);
  const warn = await executor.executeToolCall({
    name: "warn",
    call_id: "a",
    id: "i1",
    arguments: {},
  });
  assert.deepEqual(warn, {
    name: "warn",
    call_id: "a",
    id: "i1",
    success: true,
    output: "o",
    error: "a warning",
    error_code: 0,
  });
  const bad = await executor.executeToolCall({ name: "bad", call_id: "b", arguments: {} });
  assert.equal(bad.success, false);
  assert.equal(bad.error_code, 2);
});

Deno.test("arguments are validated before the tool runs", async () => {
  let ran = false;
  const executor = new ToolExecutor([
    new FakeTool("t", [{ name: "n", type: "integer", description: "n", required: true }], () => {
      ran = true;
      return ok("");
    }),
  ]);
  const result = await executor.executeToolCall({ name: "t", call_id: "1", arguments: { n: "1" } });
  assert.equal(result.success, false);
  assert.match(result.error!, /`n` must be an integer/);
  assert.equal(ran, false);
  const notObject = await executor.executeToolCall({ name: "t", call_id: "2", arguments: "{bad" });
  assert.match(notObject.error!, /must be a JSON object/);
});

Deno.test("parallel calls really overlap; results keep call order", async () => {
  // A barrier instead of a stopwatch: each call waits until both have started. Calls run one after
  // another never meet there, and the first gives up — however loaded the machine is.
  let arrived = 0;
  const barrier = Promise.withResolvers<void>();
  const meeting = new FakeTool(
    "meet",
    [{ name: "tag", type: "string", description: "t" }],
    async (a) => {
      if (++arrived === 2) barrier.resolve();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const met = await Promise.race([
        barrier.promise.then(() => true),
        new Promise<false>((r) => timer = setTimeout(() => r(false), 5_000)),
      ]);
      clearTimeout(timer);
      // The second call finishes first, so call order in the results is not completion order.
      if (a.tag === "first") await sleep(50);
      return met ? ok(String(a.tag)) : fail("the other call never started alongside this one");
    },
  );
  const executor = new ToolExecutor([meeting]);
  const results = await executor.parallelToolCall([
    { name: "meet", call_id: "1", arguments: { tag: "first" } },
    { name: "meet", call_id: "2", arguments: { tag: "second" } },
  ]);
  assert.deepEqual(results.map((r) => r.error ?? null), [null, null], "calls did not overlap");
  assert.deepEqual(results.map((r) => r.output), ["first", "second"]);
});

Deno.test("sequential calls run one after another, in order", async () => {
  const order: string[] = [];
  const tool = new FakeTool("t", [{ name: "tag", type: "string", description: "t" }], async (a) => {
    order.push(`start ${a.tag}`);
    await sleep(20);
    order.push(`end ${a.tag}`);
    return ok(String(a.tag));
  });
  const results = await new ToolExecutor([tool]).sequentialToolCall([
    { name: "t", call_id: "1", arguments: { tag: "a" } },
    { name: "t", call_id: "2", arguments: { tag: "b" } },
  ]);
  assert.deepEqual(order, ["start a", "end a", "start b", "end b"]);
  assert.deepEqual(results.map((r) => r.call_id), ["1", "2"]);
});

Deno.test("closeTools closes every tool even when one close fails", async () => {
  const a = new FakeTool("a", [], undefined, () => Promise.reject(new Error("stuck")));
  const b = new FakeTool("b", []);
  const errors = await new ToolExecutor([a, b]).closeTools();
  assert.equal(a.closed, true);
  assert.equal(b.closed, true);
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /closing tool 'a' failed: Error: stuck/);
});

Deno.test("a gate sees the validated arguments; its refusal is the result, and the tool never runs", async () => {
  const ran: unknown[] = [];
  const seen: unknown[] = [];
  const tool = new FakeTool("edit", [{ name: "path", type: "string", description: "p" }], (a) => {
    ran.push(a);
    return ok("ran");
  });
  const executor = new ToolExecutor([tool], {
    check: (_tool, args) => {
      seen.push(args);
      return Promise.resolve(args.path === "/secret" ? "The user denied this edit." : null);
    },
  });
  const refused = await executor.executeToolCall({
    name: "edit",
    call_id: "r",
    arguments: { path: "/secret" },
  });
  assert.deepEqual(refused, {
    name: "edit",
    call_id: "r",
    success: false,
    output: null,
    error: "The user denied this edit.",
    error_code: -1,
  });
  const allowed = await executor.executeToolCall({
    name: "edit",
    call_id: "a",
    arguments: { path: null },
  });
  assert.equal(allowed.success, true);
  const invalid = await executor.executeToolCall({
    name: "edit",
    call_id: "i",
    arguments: { path: 3 },
  });
  assert.equal(invalid.success, false);
  assert.deepEqual(seen, [{ path: "/secret" }, {}], "null dropped; the invalid call never asked");
  assert.deepEqual(ran, [{}]);
});

Deno.test("a tool swapped in or added after assembly runs behind the same gate", async () => {
  const gated: string[] = [];
  const executor = new ToolExecutor([new FakeTool("edit", [], () => ok("disk"))], {
    check: (tool) => {
      gated.push(tool.name);
      return Promise.resolve("refused by the gate");
    },
  });
  executor.replaceTool("EDIT", new FakeTool("edit", [], () => ok("buffer")));
  executor.addTools([new FakeTool("mcp__x__y", [], () => ok("mcp"))]);
  for (const name of ["edit", "mcp__x__y"]) {
    const result = await executor.executeToolCall({ name, call_id: name, arguments: {} });
    assert.equal(result.error, "refused by the gate");
  }
  assert.deepEqual(gated, ["edit", "mcp__x__y"]);
  // Only a tool of the same name stands in; a name already there is not added twice.
  assert.throws(() => executor.replaceTool("edit", new FakeTool("bash", [])), /names differ/);
  assert.throws(() => executor.replaceTool("bash", new FakeTool("bash", [])), /no tool 'bash'/);
  assert.throws(() => executor.addTools([new FakeTool("Edit", [])]), /'Edit' is there already/);
  assert.deepEqual(executor.tools.map((t) => t.name), ["edit", "mcp__x__y"]);
});

Deno.test("stopShells closes the tool that holds a shell, and only it, whatever a close does", async () => {
  const closed: string[] = [];
  const host: Host = {
    call: () => Promise.resolve(ok("ran")),
    close: (name) => {
      closed.push(name);
      return name === "bash" ? Promise.reject(new Error("the shell was gone")) : Promise.resolve();
    },
  };
  const builtIns = CATALOG.map((entry) => new StandInTool(entry, testContext(), host));
  // A client's MCP tool whose own name is `bash`: not Deft's shell.
  const remote = new FakeTool("mcp__files__bash", []);
  const executor = new ToolExecutor([...builtIns, remote]);
  await executor.stopShells();
  assert.deepEqual(closed, ["bash"], "the shell alone is closed (its close failing is no error)");
  assert.equal(remote.closed, false);
  // A session without the shell has nothing to stop.
  await new ToolExecutor(builtIns.filter((t) => t.name !== "bash")).stopShells();
  assert.deepEqual(closed, ["bash"]);
});

/** Where front ends live: none of them picks a tool by its name. */
const FRONT_ENDS = ["src/acp", "src/cli", "src/agent", "src/batch", "src/mcp"];

/**
 * The places a front end still finds a built-in tool by its name, each with the tool and the
 * reason; any other (a shell stopped by name among them) fails the test below.
 */
const PICKED_BY_NAME: { file: string; tool: string; why: string }[] = [
  {
    file: "src/cli/interactive/shell_line.ts",
    tool: "bash",
    why: "the user's `!command` runs in the shell tool, through the gate as the user's own call",
  },
  {
    file: "src/acp/agent.ts",
    tool: "str_replace_based_edit_tool",
    why: "the editor is swapped for one over the client's buffers",
  },
];

Deno.test("no front end picks a tool by its name to stop its shell (or for anything else)", () => {
  const root = new URL("../../", import.meta.url).pathname;
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(`${root}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.name.endsWith(".ts")) {
        Deno.readTextFileSync(`${root}${path}`).split("\n").forEach((line, i) => {
          if (/\.find\(\s*["'`]/.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
        });
      }
    }
  };
  FRONT_ENDS.forEach(walk);
  const listed = (hit: string, p: (typeof PICKED_BY_NAME)[number]) =>
    hit.startsWith(`${p.file}:`) && hit.includes(`.find("${p.tool}")`);
  const unexplained = found.filter((hit) => !PICKED_BY_NAME.some((p) => listed(hit, p)));
  assert.deepEqual(unexplained, [], "ask the executor (stopShells) or the catalog instead");
  // Each place listed still picks by name (else it leaves the list).
  for (const p of PICKED_BY_NAME) {
    assert.ok(found.some((hit) => listed(hit, p)), `${p.file} no longer picks ${p.tool} by name`);
  }
});
