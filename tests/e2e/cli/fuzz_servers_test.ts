/**
 * Fuzzing `deft serve` and `deft mcp` with a few thousand random and mutated calls: wrong types,
 * huge strings, deep nesting, random bytes, broken JSON-RPC envelopes. Every call is answered, the
 * server is alive at the end (it answers a plain call), exits when its input ends, and leaves no
 * process behind. The generator is seeded, so a failure can be replayed (the seed is printed).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ServerProcess } from "../../helpers/server_process.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

const CALLS = 1_500;

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Fuzz {
  constructor(readonly random: () => number, readonly ws: string) {}

  int(n: number): number {
    return Math.floor(this.random() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** A value of a random kind, sometimes huge or deeply nested. */
  value(): unknown {
    switch (this.int(12)) {
      case 0:
        return null;
      case 1:
        return this.random() < 0.5;
      case 2:
        return this.pick([0, -1, 1e308, -1e-308, 2 ** 53 + 1, 3.5, 1e21]);
      case 3:
        return "x".repeat(this.pick([0, 1, 1000, 300_000]));
      case 4:
        return String.fromCharCode(...Array.from({ length: 20 }, () => this.int(0x10000)));
      case 5:
        return nested(this.pick([10, 600, 3_000]));
      case 6:
        return [this.value(), this.value()];
      case 7:
        return { [this.pick(["__proto__", "constructor", "a", ""])]: this.value() };
      case 8:
        return join(this.ws, this.pick(["a.txt", "d/b.json", "字".repeat(85), "..", "../x"]));
      case 9:
        return this.pick(["/etc/passwd", "relative.txt", "", "/dev/zero", "/proc/self/mem"]);
      case 10:
        return this.pick(["$", "$..*", "$[?(@.a > 1)]", "$[?(@.match(/(a|a)+$/))]", "$[("]);
      default:
        return this.pick(["view", "create", "str_replace", "insert", "undo_edit", "set", "add"]);
    }
  }

  /** Arguments for `tool`: plausible ones with some fields mutated, or garbage. */
  args(tool: string): unknown {
    if (this.random() < 0.1) return this.value();
    const base: Record<string, unknown> = tool === "bash"
      // Commands stay harmless: only their types and companions are fuzzed.
      ? { command: this.pick(["echo ok", "true", "printf %s x", "sleep 300 &", "cd d"]) }
      : tool === "json_edit_tool"
      ? { operation: this.value(), file_path: this.value(), json_path: this.value() }
      : tool === "str_replace_based_edit_tool"
      ? { command: this.value(), path: this.value(), file_text: this.value() }
      : {};
    for (let i = this.int(3); i > 0; i--) {
      base[this.pick(["command", "path", "value", "timeout", "view_range", "restart", "x"])] = this
        .value();
    }
    // Names match without regard to case ("BASH" is bash). Any string may be a command here
    // (`view` starts vim, which waits its full timeout), so a bash call that would run gets a short
    // timeout; a malformed one is refused before it runs.
    const bash = tool.toLowerCase() === "bash";
    if (bash && typeof base.command !== "string") base.command = "echo ok";
    if (bash && (base.timeout === undefined || typeof base.timeout === "number")) base.timeout = 5;
    if (bash) delete base.restart;
    return base;
  }

  tool(): string {
    return this.pick([
      "bash",
      "str_replace_based_edit_tool",
      "json_edit_tool",
      "sequentialthinking",
      "task_done",
      "ckg",
      "no_such_tool",
      "BASH",
    ]);
  }

  /** A line of random bytes (no newline), never blank. */
  bytes(): Uint8Array {
    const bytes = Uint8Array.from({ length: 1 + this.int(200) }, () => this.int(256));
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) bytes[i] = 0x21;
    bytes[0] = 0x7b;
    return bytes;
  }

  /** Drops, duplicates or flips a few characters of a JSON text. */
  mutate(text: string): string {
    const chars = [...text];
    for (let i = 1 + this.int(3); i > 0; i--) {
      const at = this.int(chars.length);
      const op = this.int(3);
      if (op === 0) chars.splice(at, 1);
      else if (op === 1) chars.splice(at, 0, chars[at] ?? "{");
      else chars[at] = this.pick(["{", "}", "[", "]", '"', ",", ":", "\\", "0"]);
    }
    const mutated = chars.join("").replaceAll("\n", " ");
    return mutated.trim() === "" ? "{" : mutated;
  }
}

function nested(depth: number): unknown {
  let value: unknown = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/**
 * Pids of processes whose working directory is inside `dir` (a bash session's is). Read by a
 * short bash script: Deno's permissions for the tests do not include /proc.
 */
async function processesIn(dir: string): Promise<number[]> {
  const script = `for p in /proc/[0-9]*; do c=$(readlink "$p/cwd" 2>/dev/null) || continue; ` +
    `case "$c" in "$1"|"$1"/*) echo "\${p#/proc/}";; esac; done`;
  const out = await new Deno.Command("bash", { args: ["-c", script, "scan", dir] }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "").map(Number);
}

async function fuzzWorkspace(): Promise<string> {
  const ws = await tempDirUntilExit("deft-fuzz-");
  await Deno.mkdir(join(ws, "d"));
  await Deno.writeTextFile(join(ws, "a.txt"), "hello\nworld\n");
  await Deno.writeTextFile(join(ws, "d", "b.json"), '{"a": [1, 2, {"b": "aaaa"}]}\n');
  return ws;
}

async function finish(server: ServerProcess, ws: string): Promise<void> {
  assert.equal(await server.end(60_000), 0, server.stderr);
  // Whatever the shells started is gone once the server has exited.
  for (let i = 0; i < 50 && (await processesIn(ws)).length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(await processesIn(ws), [], "processes outlived the server");
}

Deno.test("fuzz: deft serve answers every line and leaves nothing behind", async () => {
  const seed = Number(Deno.env.get("DEFT_FUZZ_SEED") ?? Date.now() % 1_000_000);
  console.log(`serve fuzz seed ${seed} (DEFT_FUZZ_SEED to replay)`);
  const ws = await fuzzWorkspace();
  const fuzz = new Fuzz(prng(seed), ws);
  const server = new ServerProcess(["serve", "-w", ws, "--deadline", "default=20"], { cwd: ws });
  try {
    let expected = 0;
    let pending = 0;
    let answered = 0;
    const drain = async (limit: number) => {
      while (pending > limit) {
        const reply = await server.next(60_000);
        assert.equal(typeof reply.success, "boolean", JSON.stringify(reply).slice(0, 300));
        pending--;
        answered++;
      }
    };
    for (let i = 0; i < CALLS; i++) {
      const kind = fuzz.int(10);
      if (kind === 0) {
        await server.send(fuzz.bytes());
        await server.send("\n");
        expected++;
        pending++;
      } else if (kind === 1) {
        const calls = Array.from(
          { length: fuzz.int(4) },
          (_, j) => ({ id: `${i}.${j}`, name: fuzz.tool(), arguments: fuzz.args("bash") }),
        );
        await server.sendJson(calls);
        expected += Math.max(1, calls.length);
        pending += Math.max(1, calls.length);
      } else {
        const tool = fuzz.tool();
        const call = {
          id: fuzz.random() < 0.9 ? i : fuzz.value(),
          name: tool,
          arguments: fuzz.args(tool),
        };
        const text = JSON.stringify(call);
        await server.send(kind === 2 ? fuzz.mutate(text) : text);
        expected++;
        pending++;
      }
      await drain(20);
    }
    await drain(0);
    assert.equal(answered, expected);
    await server.sendJson({ id: "last", name: "bash", arguments: { command: "echo alive" } });
    const last = await server.next(30_000);
    assert.equal(last.id, "last");
    assert.match(String(last.output), /alive/);
    await finish(server, ws);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("fuzz: deft mcp answers every request and leaves nothing behind", async () => {
  const seed = Number(Deno.env.get("DEFT_FUZZ_SEED") ?? Date.now() % 1_000_000);
  console.log(`mcp fuzz seed ${seed} (DEFT_FUZZ_SEED to replay)`);
  const ws = await fuzzWorkspace();
  const fuzz = new Fuzz(prng(seed), ws);
  const server = new ServerProcess(["mcp", "-w", ws, "--deadline", "default=20"], { cwd: ws });
  try {
    await server.sendJson({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "fuzz", version: "1" },
      },
    });
    assert.equal((await server.next()).id, "init");
    await server.sendJson({ jsonrpc: "2.0", method: "notifications/initialized" });
    const waiting = new Set<number>();
    let nullReplies = 0;
    let expectedNull = 0;
    let pending = 0;
    const drain = async (limit: number) => {
      while (pending > limit) {
        const reply = await server.next(60_000);
        assert.equal(reply.jsonrpc, "2.0");
        assert.ok("result" in reply || "error" in reply, JSON.stringify(reply).slice(0, 300));
        if (reply.id === null) nullReplies++;
        else assert.ok(waiting.delete(reply.id as number), `unexpected id ${reply.id}`);
        pending--;
      }
    };
    for (let i = 0; i < CALLS; i++) {
      const kind = fuzz.int(10);
      if (kind === 0) {
        await server.send(fuzz.bytes());
        await server.send("\n");
        expectedNull++;
        pending++;
      } else if (kind === 1) {
        // A notification, valid or not: never answered.
        await server.sendJson({ jsonrpc: "2.0", method: fuzz.pick(["x", "notifications/y"]) });
      } else if (kind === 2) {
        // A broken envelope that still carries a readable id.
        await server.sendJson({
          jsonrpc: fuzz.pick(["2.0", "1.0", 2]),
          id: i,
          method: fuzz.pick(["tools/call", "tools/list", 5, undefined]),
          params: fuzz.value(),
        });
        waiting.add(i);
        pending++;
      } else {
        const tool = fuzz.tool();
        await server.sendJson({
          jsonrpc: "2.0",
          id: i,
          method: "tools/call",
          params: { name: fuzz.random() < 0.95 ? tool : fuzz.value(), arguments: fuzz.args(tool) },
        });
        waiting.add(i);
        pending++;
      }
      await drain(20);
    }
    await drain(0);
    assert.equal(waiting.size, 0, `unanswered: ${[...waiting].slice(0, 10)}`);
    assert.equal(nullReplies, expectedNull);
    await server.sendJson({
      jsonrpc: "2.0",
      id: "last",
      method: "tools/call",
      params: { name: "bash", arguments: { command: "echo alive" } },
    });
    const last = await server.next(30_000);
    assert.match(JSON.stringify(last.result), /alive/);
    await finish(server, ws);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
