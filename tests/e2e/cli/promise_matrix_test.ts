/**
 * The promise matrix: every promise Deft makes about a tool call (a PreToolUse hook denies by exit
 * 2 and by JSON, a PostToolUse hook's context reaches the result, a deny rule refuses, an ask rule
 * asks or, headless, refuses, approval mode `commands` asks, the sandbox keeps writes in the
 * workspace, secrets stay out of the shell and out of what the user sees, spans carry no content)
 * checked on every front end: `deft run`, `deft -p`, `deft` at a terminal, `deft serve`, `deft mcp`
 * with the MCP SDK's client, `deft acp` with the ACP SDK's client (with and without its file
 * system), a `deft batch` task, and a container session. Each front end runs one session (two
 * where the approval mode must differ) against a scripted model that plays a plan of cells; each
 * cell is a step `promise × front end` that reads only its own calls and files
 * (tests/helpers/promise_cells.ts).
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type DeftRun, mockRunArgs } from "../../helpers/deft.ts";
import { deftMcpCommand } from "../../helpers/deft_mcp.ts";
import { ServerProcess } from "../../helpers/server_process.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { type ClientFiles, withAcp } from "../../helpers/acp_client.ts";
import { testRuntime } from "../../helpers/containers.ts";
import { git } from "../../helpers/repo.ts";
import {
  callsOf,
  type Cell,
  cellName,
  everythingSent,
  exists,
  makeStage,
  otlpReceiver,
  planModel,
  type PlannedCall,
  planPrompt,
  resultSeen,
  runDeftBounded,
  type Stage,
} from "../../helpers/promise_matrix.ts";
import { checkCell, type Evidence } from "../../helpers/promise_cells.ts";

const ENTER = "\r";
/** The cells a headless session plays in approval mode `never`; `f` needs a session of its own. */
const HEADLESS: Cell[] = ["a", "b", "c", "d", "e", "g", "h", "i"];
/** Where someone can be asked: first these in mode `never`, then `e` and `f` in `commands`. */
const FIRST: Cell[] = ["a", "b", "c", "d", "g", "h", "i"];
const ASKED: Cell[] = ["e", "f"];
const MODEL = ["-m", "mock-model", "-k", "k"];

function modelFlags(url: string): string[] {
  return ["--model-base-url", `${url}/v1`, ...MODEL];
}

async function readOr(path: string): Promise<string> {
  return await Deno.readTextFile(path).catch(() => "");
}

/** Runs the steps of `cells` on `ev`. */
async function steps(
  t: Deno.TestContext,
  frontEnd: string,
  cells: Cell[],
  ev: Evidence,
  headless: boolean,
): Promise<void> {
  for (const cell of cells) {
    await t.step(cellName(cell, frontEnd), () => checkCell(cell, ev, headless));
  }
}

/** Evidence of a session driven by the scripted model, on the host's workspace. */
function modelEvidence(
  stage: Stage,
  mock: ReturnType<typeof planModel>,
  spans: () => ReturnType<ReturnType<typeof otlpReceiver>["of"]>,
  userOutput: () => string,
  extra: Partial<Evidence> = {},
): Evidence {
  return {
    stage,
    result: (id) => resultSeen(mock, id),
    made: (name) => exists(`${stage.ws}/${name}`),
    received: () => everythingSent(mock),
    userOutput,
    spans,
    traced: true,
    ...extra,
  };
}

/** The SDK clients drive their child through Node's child_process, and the container runtime
 * outlives a step: the sanitizers cannot follow those. */
const OPTIONS = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name: "promise matrix: deft run",
  fn: async (t) => {
    const collector = otlpReceiver();
    const stage = await makeStage("deft run", collector.url);
    const mock = planModel((c) => callsOf(c as Cell, stage));
    try {
      const traj = `${stage.home}/run.json`;
      const [run, asking] = await Promise.all([
        runDeftBounded(
          mockRunArgs(mock, planPrompt(HEADLESS), stage.ws, {
            extra: ["-t", traj, "--json"],
          }),
          { cwd: stage.home, env: stage.env },
        ),
        // Mode `commands` with nobody to ask: the command must not run.
        runDeftBounded(
          mockRunArgs(mock, planPrompt(["f"]), stage.ws, {
            extra: ["--approval", "commands", "-t", `${stage.home}/f.json`],
          }),
          { cwd: stage.home, env: { ...stage.env, OTEL_DENO: "false" }, ms: 60_000 },
        ),
      ]);
      const shown = () => `${run.stdout}\n${run.stderr}\n${Deno.readTextFileSync(traj)}`;
      const ev = modelEvidence(stage, mock, () => collector.of(stage.frontEnd), shown);
      await steps(t, stage.frontEnd, HEADLESS, ev, true);
      await t.step(cellName("f", stage.frontEnd), async () => {
        await checkCell("f", ev, true);
        refusedAtStart(asking);
      });
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});

Deno.test({
  name: "promise matrix: deft -p",
  fn: async (t) => {
    const collector = otlpReceiver();
    const stage = await makeStage("deft -p", collector.url);
    const mock = planModel((c) => callsOf(c as Cell, stage));
    const line = (cells: Cell[], extra: string[]) => [
      "-p",
      planPrompt(cells),
      "-w",
      stage.ws,
      "--provider",
      "openai_compatible",
      ...modelFlags(mock.url),
      ...extra,
    ];
    try {
      const [run, asking] = await Promise.all([
        runDeftBounded(line(HEADLESS, ["--output-format", "stream-json"]), {
          cwd: stage.home,
          env: stage.env,
        }),
        runDeftBounded(line(["f"], ["--approval", "commands"]), {
          cwd: stage.home,
          env: { ...stage.env, OTEL_DENO: "false" },
          ms: 60_000,
        }),
      ]);
      const ev = modelEvidence(
        stage,
        mock,
        () => collector.of(stage.frontEnd),
        () => `${run.stdout}\n${run.stderr}`,
      );
      await steps(t, stage.frontEnd, HEADLESS, ev, true);
      await t.step(cellName("f", stage.frontEnd), async () => {
        await checkCell("f", ev, true);
        refusedAtStart(asking);
      });
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});

Deno.test({
  name: "promise matrix: deft interactive (pty)",
  fn: async (t) => {
    const collector = otlpReceiver();
    const stage = await makeStage("deft interactive", collector.url);
    const mock = planModel((c) => callsOf(c as Cell, stage));
    try {
      const r = await runDeftInPty(
        ["-w", stage.ws, "--provider", "openai_compatible", ...modelFlags(mock.url)].concat(
          ["--approval", "never"],
        ),
        [
          { expect: "deft> ", send: planPrompt(FIRST) + ENTER },
          { expect: "matrix done[\\s\\S]*deft> ", send: "/approval commands" + ENTER },
          { expect: "approval: commands[\\s\\S]*deft> ", send: planPrompt(ASKED) + ENTER },
          { expect: "approve> ", send: "n" + ENTER },
          { expect: "approve> ", send: "n" + ENTER },
          { expect: "matrix done[\\s\\S]*deft> ", send: "/exit" + ENTER },
          { expect: "bye" },
        ],
        { cwd: stage.home, env: stage.env, timeoutSeconds: 40 },
      );
      const out = plain(r.output);
      // The questions, each from its heading to its prompt.
      const questions = out.split("Approve this").slice(1).map((q) => q.split("approve>")[0]);
      const ev = modelEvidence(stage, mock, () => collector.of(stage.frontEnd), () => out, {
        asked: (command) => questions.find((q) => q.includes(command)) ?? null,
        questionNamesRule: true,
      });
      await steps(t, stage.frontEnd, [...FIRST, ...ASKED], ev, false);
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});

Deno.test({
  name: "promise matrix: deft serve",
  fn: async (t) => {
    const collector = otlpReceiver();
    const stage = await makeStage("deft serve", collector.url);
    const server = new ServerProcess(["serve", "-w", stage.ws], {
      cwd: stage.home,
      env: stage.env,
    });
    const replies = new Map<string, string>();
    try {
      for (const call of HEADLESS.flatMap((c) => callsOf(c, stage))) {
        await server.sendJson({ id: call.id, name: call.name, arguments: call.args });
        const reply = await server.next();
        replies.set(String(reply.id), JSON.stringify(reply));
      }
    } finally {
      await server.end();
      await collector.close();
    }
    const ev = toolServerEvidence(stage, replies, () => collector.of(stage.frontEnd));
    // The rules hold here too: a deny is a policy in every mode, and where nobody can be asked
    // (serve, mcp) an ask refuses (issue 49, "headless semantics that fail closed").
    await steps(t, stage.frontEnd, HEADLESS, ev, true);
    // approval mode commands × deft serve: not a promise; serve has no approval mode (no one to ask).
  },
});

Deno.test({
  name: "promise matrix: deft mcp (MCP SDK client)",
  ...OPTIONS,
  fn: async (t) => {
    const collector = otlpReceiver();
    const stage = await makeStage("deft mcp", collector.url);
    const client = new Client({ name: "deft-matrix", version: "1.0.0" });
    const transport = new StdioClientTransport({
      ...deftMcpCommand(["-w", stage.ws]),
      env: { ...Deno.env.toObject(), NO_COLOR: "1", ...stage.env },
      cwd: stage.home,
      stderr: "pipe",
    });
    const replies = new Map<string, string>();
    try {
      await client.connect(transport);
      for (const call of HEADLESS.flatMap((c) => callsOf(c, stage))) {
        const result = await client.callTool({ name: call.name, arguments: call.args });
        replies.set(call.id, JSON.stringify(result));
      }
    } finally {
      await client.close();
      await collector.close();
    }
    const ev = toolServerEvidence(stage, replies, () => collector.of(stage.frontEnd));
    await steps(t, stage.frontEnd, HEADLESS, ev, true);
    // approval mode commands × deft mcp: not a promise; mcp has no approval mode (no one to ask).
  },
});

function toolServerEvidence(
  stage: Stage,
  replies: Map<string, string>,
  spans: Evidence["spans"],
): Evidence {
  return {
    stage,
    result: (id) => replies.get(id) ?? "",
    made: (name) => exists(`${stage.ws}/${name}`),
    received: () => [...replies.values()].join("\n"),
    userOutput: () => null,
    spans,
    // Tool servers start no trace today (tracing begins with a run's root span), so they may
    // export no span; any span they do export must hold no content either.
    traced: false,
  };
}

for (const withFs of [false, true]) {
  const frontEnd = withFs ? "deft acp (client fs)" : "deft acp";
  Deno.test({
    name: `promise matrix: ${frontEnd}`,
    ...OPTIONS,
    fn: async (t) => {
      const collector = otlpReceiver();
      const stage = await makeStage(frontEnd, collector.url);
      const mock = planModel((c) => callsOf(c as Cell, stage));
      const files: ClientFiles = { buffers: new Map(), reads: [], writes: [] };
      try {
        const { run } = await withAcp(
          mock,
          ["-w", stage.ws, "--approval", "never"],
          ["reject_once", "reject_once"],
          async (ctx) => {
            await ctx.request("initialize", {
              protocolVersion: 1,
              clientCapabilities: withFs ? { fs: { readTextFile: true, writeTextFile: true } } : {},
            });
            const { sessionId } = await ctx.request("session/new", {
              cwd: stage.ws,
              mcpServers: [],
            });
            const prompt = (cells: Cell[]) =>
              ctx.request("session/prompt", {
                sessionId,
                prompt: [{ type: "text", text: planPrompt(cells) }],
              });
            await prompt(FIRST);
            await ctx.request("session/set_mode", { sessionId, modeId: "commands" });
            await prompt(ASKED);
          },
          { home: stage.home, env: stage.env, ...(withFs ? { fs: files } : {}) },
        );
        const ev = modelEvidence(
          stage,
          mock,
          () => collector.of(frontEnd),
          () => `${JSON.stringify(run.updates)}\n${run.stderr()}`,
          {
            asked: (command) => {
              const found = run.permissions.find((p) => JSON.stringify(p).includes(command));
              return found ? JSON.stringify(found) : null;
            },
            clientWrites: () => files.writes.map((w) => w.path),
          },
        );
        await steps(t, frontEnd, [...FIRST, ...ASKED], ev, false);
      } finally {
        await mock.close();
        await collector.close();
      }
    },
  });
}

Deno.test({
  name: "promise matrix: deft batch (local task)",
  fn: async (t) => {
    const collector = otlpReceiver();
    const stage = await makeStage("deft batch", collector.url);
    // The task's repository is the stage's workspace; the task works in its own clone.
    await git(stage.ws, "init", "-q", "-b", "main");
    await git(stage.ws, "add", "-A");
    await git(stage.ws, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "matrix");
    const out = `${stage.home}/out`;
    const clone = `${out}/t1/workspace`;
    const mock = planModel((c) => callsOf(c as Cell, stage, clone));
    try {
      const tasks = `${stage.home}/tasks.jsonl`;
      await Deno.writeTextFile(
        tasks,
        JSON.stringify({ id: "t1", repo: stage.ws, task: planPrompt(HEADLESS) }) + "\n" +
          "",
      );
      const fTasks = `${stage.home}/f-tasks.jsonl`;
      await Deno.writeTextFile(
        fTasks,
        JSON.stringify({ id: "f1", repo: stage.ws, task: planPrompt(["f"]) }) + "\n",
      );
      const fConfig = `${stage.home}/commands.yaml`;
      await Deno.writeTextFile(fConfig, "approval: commands\n");
      const flags = [
        "-p",
        "openai_compatible",
        "-m",
        "mock-model",
        "--model-base-url",
        `${mock.url}/v1`,
      ];
      const env = { ...stage.env, OPENAI_COMPATIBLE_API_KEY: "k" };
      const [batch, asking] = await Promise.all([
        runDeftBounded(["batch", tasks, "--out", out, ...flags], { cwd: stage.home, env }),
        runDeftBounded(
          ["batch", fTasks, "--out", `${stage.home}/f-out`, ...flags, "--config-file", fConfig],
          { cwd: stage.home, env: { ...env, OTEL_DENO: "false" }, ms: 60_000 },
        ),
      ]);
      const shown = async () =>
        `${batch.stdout}\n${batch.stderr}\n${await readOr(
          `${out}/t1/trajectory.json`,
        )}\n${await readOr(
          `${out}/t1/deft.log`,
        )}`;
      const userOutput = await shown();
      const ev = modelEvidence(stage, mock, () => collector.of(stage.frontEnd), () => userOutput, {
        made: (name) => exists(`${clone}/${name}`),
      });
      await steps(t, stage.frontEnd, HEADLESS, ev, true);
      await t.step(cellName("f", stage.frontEnd), async () => {
        assert(!(await exists(`${stage.home}/f-out/f1/workspace/f.made`)), "f.made was made");
        const result = JSON.parse(await readOr(`${stage.home}/f-out/f1/result.json`) || "{}");
        assert(result.status && result.status !== "passed", `status ${result.status}`);
        refusedInTask(asking, await readOr(`${stage.home}/f-out/f1/deft.log`));
      });
    } finally {
      await mock.close();
      await collector.close();
    }
  },
});

/**
 * Mode `commands` with nobody to answer: the run fails at start, exit 2, naming the mode (as
 * docs/usage.md says), instead of running the command or hanging on a question.
 */
function refusedAtStart(run: DeftRun): void {
  assert(
    run.code === 2 && /approval mode 'commands'/.test(run.stderr),
    `mode commands did not refuse at start (exit ${run.code}):\n${run.stderr}`,
  );
}

/** As `refusedAtStart`, for a batch task: the task's run refused, the batch says it failed. */
function refusedInTask(batch: DeftRun, log: string): void {
  assert(
    batch.code === 1 && /approval mode 'commands'/.test(log),
    `the task's mode commands did not refuse at start (exit ${batch.code}):\n${batch.stderr}\n${log}`,
  );
}

function assert(ok: unknown, message: string): asserts ok {
  if (!ok) throw new Error(message);
}

Deno.test({
  name: "promise matrix: container session (deft run --docker-image)",
  ...OPTIONS,
  fn: async (t) => {
    await using rt = await testRuntime("docker");
    const collector = otlpReceiver();
    const stage = await makeStage("container session", collector.url);
    // The image with the workspace's matrix.env in /testbed.
    const context = `${stage.home}/image`;
    await Deno.mkdir(context);
    await Deno.copyFile(`${stage.ws}/matrix.env`, `${context}/matrix.env`);
    await Deno.writeTextFile(
      `${context}/Dockerfile`,
      `FROM ${rt.image}\nCOPY matrix.env /testbed/matrix.env\n`,
    );
    const image = `deft-matrix-${rt.label.split("=")[1]}:1`;
    await rt.cli("build", "-q", "--network", "none", "-t", image, context);
    // The workspace is the container's; a last call lists it (the container goes with the run).
    const calls = (c: string): PlannedCall[] =>
      c === "z"
        ? [{ id: "mx-z-0", name: "bash", args: { command: "ls -a /testbed; echo listed" } }]
        : callsOf(c as Cell, stage, "/testbed");
    const mock = planModel(calls);
    // Mode `commands` gets a model of its own, so its listing is its own.
    const commandsMock = planModel(calls);
    try {
      const container = ["--docker-image", image, "--container-runtime", "docker"];
      const traj = `${stage.home}/run.json`;
      const [run, asking] = await Promise.all([
        runDeftBounded(
          mockRunArgs(mock, `${planPrompt(HEADLESS)},z`, "/testbed", {
            extra: [...container, "-t", traj],
          }),
          { cwd: stage.home, env: { ...rt.env, ...stage.env } },
        ),
        runDeftBounded(
          mockRunArgs(commandsMock, `${planPrompt(["f"])},z`, "/testbed", {
            extra: [...container, "--approval", "commands", "-t", `${stage.home}/f.json`],
          }),
          { cwd: stage.home, env: { ...rt.env, ...stage.env, OTEL_DENO: "false" }, ms: 60_000 },
        ),
      ]);
      const listing = (m: typeof mock) => resultSeen(m, "mx-z-0").split(/\\n|\n/);
      const shown = `${run.stdout}\n${run.stderr}\n${await readOr(traj)}`;
      const ev = modelEvidence(stage, mock, () => collector.of(stage.frontEnd), () => shown, {
        made: (name) => {
          const lines = listing(mock);
          assert(lines.some((l) => l.includes("listed")), `no listing: ${run.stderr}`);
          return Promise.resolve(lines.some((l) => l.trim() === name));
        },
      });
      await steps(t, stage.frontEnd, HEADLESS, ev, true);
      await t.step(cellName("f", stage.frontEnd), () => {
        assert(!listing(commandsMock).some((l) => l.trim() === "f.made"), "touch f.made ran");
        refusedAtStart(asking);
      });
    } finally {
      await mock.close();
      await commandsMock.close();
      await collector.close();
    }
  },
});
