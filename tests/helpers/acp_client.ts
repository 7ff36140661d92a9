/**
 * Drives `deft acp` as a separate process through the SDK's own client app: the process is
 * spawned the way an editor spawns it (`deno run main.ts acp …`, stdin and stdout the protocol),
 * updates and permission requests are collected, and stderr is kept for the failure message.
 */
import * as acp from "@agentclientprotocol/sdk";
import { deftFlags } from "../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT } from "./deft.ts";
import { tempDirUntilExit } from "./temp.ts";
import type { MockLLM } from "./mock_llm.ts";

/** A running `deft acp` and the client connected to it. */
export interface AcpRun {
  child: Deno.ChildProcess;
  updates: acp.SessionNotification[];
  permissions: acp.RequestPermissionRequest[];
  /** Every line the agent wrote to stdout, as written. */
  stdoutLines: string[];
  stderr(): string;
}

/**
 * An editor's file system for `fs/read_text_file` and `fs/write_text_file`: open buffers by path
 * (a read of another path reads the disk), every request kept; `refuseWrites` answers writes with
 * that error. The buffers change on write; the disk never does.
 */
export interface ClientFiles {
  buffers: Map<string, string>;
  reads: string[];
  writes: { path: string; content: string }[];
  refuseWrites?: string;
}

/** How the client answers permission requests, in order (then "reject_once"). */
export type PermissionScript = (string | "never-answer")[];

/**
 * `deft acp` against the mock model, with `home` as HOME (default: a fresh one); `extra` flags
 * after the model's. `mock` null: no model flags (the config passed in `extra` says).
 */
export async function spawnAcp(
  mock: MockLLM | null,
  extra: string[] = [],
  home?: string,
  env: Record<string, string> = {},
): Promise<Deno.ChildProcess> {
  home ??= await tempDirUntilExit("deft-acp-home-");
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...deftFlags(),
      `${REPO_ROOT}main.ts`,
      "acp",
      ...(mock
        ? ["-p", "openai_compatible", "-m", "mock-model", "--model-base-url", `${mock.url}/v1`]
        : []),
      ...(mock ? ["-k", "k"] : []),
      ...extra,
    ],
    cwd: home,
    env: {
      NO_COLOR: "1",
      DENO_DIR: denoDir(),
      HOME: home,
      XDG_STATE_HOME: `${home}/state`,
      ...env,
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Collects a child's stderr as text while it runs. */
export function collectStderr(child: Deno.ChildProcess): () => string {
  let text = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of child.stderr) text += decoder.decode(chunk, { stream: true });
  })().catch(() => {});
  return () => text;
}

/**
 * An editor's usual opening: `initialize`, a new session in `cwd` (with the client's
 * `mcpServers`), one prompt of `text`; the prompt's answer.
 */
export async function promptNewSession(
  ctx: acp.ClientContext,
  cwd: string,
  text: string,
  mcpServers: acp.McpServer[] = [],
): Promise<acp.PromptResponse> {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await ctx.request("session/new", { cwd, mcpServers });
  return await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
}

/**
 * Spawns `deft acp`, connects the SDK's client app and runs `op` with it; then closes stdin and
 * waits for the process to exit (its code returned beside `op`'s value). `options.raw` is written
 * to the agent's stdin first, as is; `options.home` is HOME (two runs sharing sessions); `options.env` adds to the environment.
 */
export async function withAcp<T>(
  mock: MockLLM | null,
  extra: string[],
  answers: PermissionScript,
  op: (ctx: acp.ClientContext, run: AcpRun) => Promise<T>,
  options: { raw?: string; home?: string; env?: Record<string, string>; fs?: ClientFiles } = {},
): Promise<{ value: T; code: number; run: AcpRun }> {
  const child = await spawnAcp(mock, extra, options.home, options.env);
  if (options.raw !== undefined) {
    // Bytes no client library would send (malformed JSON), before the client connects.
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.raw));
    writer.releaseLock();
  }
  const stderr = collectStderr(child);
  const run: AcpRun = { child, updates: [], permissions: [], stdoutLines: [], stderr };
  // Stdout is kept line by line on its way to the client: it must hold nothing but protocol.
  let partial = "";
  const decoder = new TextDecoder();
  const stdout = child.stdout.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
        partial = lines.pop()!;
        run.stdoutLines.push(...lines);
        controller.enqueue(chunk);
      },
      flush() {
        if (partial !== "") run.stdoutLines.push(partial);
      },
    }),
  );
  const script = [...answers];
  const app = acp.client({ name: "deft-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      run.updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      run.permissions.push(params);
      const answer = script.shift() ?? "reject_once";
      if (answer === "never-answer") {
        // Until the agent gives up on it (the turn was cancelled).
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
        return { outcome: { outcome: "cancelled" } };
      }
      return { outcome: { outcome: "selected", optionId: answer } };
    });
  const files = options.fs;
  if (files) {
    app.onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
      files.reads.push(params.path);
      return { content: files.buffers.get(params.path) ?? await Deno.readTextFile(params.path) };
    }).onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      files.writes.push({ path: params.path, content: params.content });
      if (files.refuseWrites) throw acp.RequestError.internalError(undefined, files.refuseWrites);
      files.buffers.set(params.path, params.content);
      return {};
    });
  }
  let value: T;
  try {
    value = await app.connectWith(
      acp.ndJsonStream(child.stdin, stdout),
      (ctx) => op(ctx, run),
    );
  } catch (e) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone already */ }
    await child.status;
    throw new Error(`${(e as Error).message}\n--- stderr ---\n${stderr()}`);
  }
  // The client hangs up: stdin closes, as when an editor closes the agent.
  await child.stdin.close().catch(() => {});
  const status = await withDeadline(child.status, 20_000, () => {
    child.kill("SIGKILL");
    return `deft acp did not exit after stdin closed\n${stderr()}`;
  });
  return { value, code: status.code, run };
}

/** `promise`, or a failure with `why()` after `ms`. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, why: () => string) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(why())), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The session updates of one kind, in order. */
export function updatesOf(run: AcpRun, kind: string): Record<string, unknown>[] {
  return run.updates.map((n) => n.update as unknown as Record<string, unknown>)
    .filter((u) => u.sessionUpdate === kind);
}
