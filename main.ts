/**
 * Deft's entry point. `deft --version` and `deft --help` answer from small tables (src/cli/help.ts);
 * commands with a plain command line (`deft tool`, `deft tools`, `deft serve`, `deft sessions`,
 * `deft config`, `deft interactive`, and a launch line that opens a conversation: `deft`,
 * `deft "PROMPT"`, `deft -c`) and plain `deft ckg search-*` lines take a fast path that never
 * loads commander (src/cli/fast.ts); everything else,
 * including subcommands' help and usage errors, goes through the full commander program in
 * src/cli/program.ts. Tools that touch the system run in a worker started from this same module
 * with narrowed permissions.
 *
 * Nothing is imported statically: a static import would load in the tool worker too, which needs
 * none of the CLI (and every module it loads delays its first tool call). Each path loads only
 * what it uses: the help loads no `node:` module (the first one costs every start ~6 ms).
 */

/**
 * The modules a command line needs first, loaded in one round with the user's folder's: the
 * streams, and either the instant answers (a lone option: `--help`, `-h`, `--version`, `-V`) or
 * the fast path's parser, which the instant answers do without.
 */
interface FirstModules {
  io: typeof import("./src/cli/io.ts");
  help?: typeof import("./src/cli/help.ts");
  fastPath?: FastPath;
}

function firstModules(args: readonly string[]): Promise<FirstModules> {
  const answerable = args.length === 1 && args[0].startsWith("-");
  return Promise.all([
    import("./src/cli/io.ts"),
    answerable ? import("./src/cli/help.ts") : undefined,
    answerable ? undefined : loadFastPath(),
  ]).then(([io, help, fastPath]) => ({ io, help, fastPath }));
}

async function main(args: string[], first: FirstModules): Promise<number> {
  const { UsageError, writeStderr, writeStdout } = first.io;
  try {
    const answer = first.help?.fastAnswer(args);
    if (answer !== undefined) {
      await writeStdout(answer);
      return 0;
    }
    const { fastParse, runPipelineCommand } = first.fastPath ?? await loadFastPath();
    const fast = fastParse(args);
    if (fast) return await runPipelineCommand(fast);
    if (args[0] === "ckg") {
      // A plain `deft ckg search-*` line, also without commander (src/cli/ckg.ts).
      const answered = await (await import("./src/cli/ckg.ts")).ckgFastPath(args.slice(1));
      if (answered !== undefined) return answered;
    }
    const { runProgram } = await import("./src/cli/program.ts");
    return await runProgram(args);
  } catch (e) {
    if (e instanceof Deno.errors.BrokenPipe) return 0;
    // An error can echo model or repository text (a path, a model id, a key): masked and inert.
    const [{ maskOutput }, { terminalText }] = await Promise.all([
      import("./src/policy/secrets.ts"),
      import("./src/policy/terminal_text.ts"),
    ]);
    const shown = (message: string) => terminalText(maskOutput(message));
    if (e instanceof UsageError) {
      writeStderr(`deft: ${shown(e.message)}`);
      return 2;
    }
    writeStderr(`deft: ${shown(e instanceof Error ? e.message : String(e))}`);
    return 1;
  }
}

interface FastPath {
  fastParse: typeof import("./src/cli/fast.ts").fastParse;
  runPipelineCommand: typeof import("./src/cli/dispatch.ts").runPipelineCommand;
}

async function loadFastPath(): Promise<FastPath> {
  const [{ fastParse }, { runPipelineCommand }] = await Promise.all([
    import("./src/cli/fast.ts"),
    import("./src/cli/dispatch.ts"),
  ]);
  return { fastParse, runPipelineCommand };
}

// `deft __network-forwarder PORT SOCKET`: the sandbox's network relay (src/policy/network), which
// loads nothing else and needs no permission but its port and socket.
if (import.meta.main && Deno.args[0] === "__network-forwarder") {
  const { forwarderMain } = await import("./src/policy/network/forwarder.ts");
  Deno.exit(await forwarderMain(Deno.args.slice(1)));
}

// The same module is the entry of the worker that hosts the tools (see src/tools/host). The host's
// entries are reached directly, not through its public module, so a worker loads none of the main
// thread's side.
const [{ inWorker }, { setWorkerEntry, TOOL_HOST_COMMAND }] = await Promise.all([
  import("./src/tools/worker_scope.ts"),
  import("./src/tools/host/entry_points.ts"),
]);
if (inWorker()) {
  const { serveToolHost } = await import("./src/tools/host/worker.ts");
  serveToolHost();
} else if (import.meta.main && Deno.args[0] === TOOL_HOST_COMMAND) {
  // The sandboxed tool host (src/tools/host/sandboxed.ts): this same module, inside bubblewrap.
  const { relayToolHost } = await import("./src/tools/host/relay.ts");
  setWorkerEntry(import.meta.url);
  Deno.exit(await relayToolHost());
} else if (import.meta.main) {
  const [{ enterInvocationDir }, first] = await Promise.all([
    import("./src/cli/invocation_dir.ts"),
    firstModules(Deno.args),
  ]);
  setWorkerEntry(import.meta.url);
  enterInvocationDir(import.meta.url);
  Deno.exit(await main(Deno.args, first));
}
