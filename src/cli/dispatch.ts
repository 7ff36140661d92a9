/** Runs a command fast.ts parsed. Each command module is imported only when it runs. */
import type { FastParse } from "./fast.ts";

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
  }
}
