/** Runs a command fast.ts parsed. Each command module is imported only when it runs. */
import type { FastParse } from "./fast.ts";
import type { InteractiveOptions } from "./interactive.ts";

/** Runs `parsed` and returns its exit code. */
export async function runPipelineCommand(parsed: FastParse): Promise<number> {
  const { command, positionals, options } = parsed;
  switch (command) {
    case "tools": {
      const { toolsCommand } = await import("./tools.ts");
      return await toolsCommand(options);
    }
    case "tool": {
      const { toolCommand } = await import("./tool.ts");
      return await toolCommand(positionals[0]!, positionals[1], options);
    }
    case "serve": {
      const { serveCommand } = await import("./serve.ts");
      return await serveCommand(options);
    }
    case "sessions": {
      const { sessionsCommand } = await import("./sessions.ts");
      return await sessionsCommand(options);
    }
    case "config": {
      const { configCommand } = await import("./config.ts");
      return await configCommand(options);
    }
    case "interactive": {
      const { interactiveCommand } = await import("./interactive.ts");
      return await interactiveCommand({ ...options, prompt: positionals[0] } as InteractiveOptions);
    }
    case "deft": {
      // The launch line opening a conversation (program.ts's `launch` takes every other one):
      // `-C DIR` names the workspace as `-w` does.
      const { cd, print: _, ...opts } = options;
      const { interactiveCommand } = await import("./interactive.ts");
      return await interactiveCommand({
        ...opts,
        workingDir: opts.workingDir ?? cd,
        prompt: positionals.length > 0 ? positionals.join(" ") : undefined,
      } as InteractiveOptions);
    }
  }
}
