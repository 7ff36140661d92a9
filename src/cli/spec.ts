/**
 * Command-line options, each declared once, and the pipeline commands' table. `main.ts` builds commander from this table for
 * help and errors, and `fast.ts` parses the same table with node:util's parseArgs, so that
 * `deft tool` and `deft tools` start without loading commander (which pulls in most of Node's
 * compatibility layer and doubles start-up). The options other commands share with them live here
 * too; the rest are declared in `program.ts`.
 */
import { SANDBOX_MODES } from "../policy/sandbox.ts";

/** One option of a command. */
export interface OptionSpec {
  /** Long name without dashes, e.g. `working-dir`. */
  long: string;
  short?: string;
  /** Placeholder when the option takes a value, e.g. `dir`. */
  value?: string;
  description: string;
  choices?: readonly string[];
  default?: string;
  /** The value must be an integer: ≥ 1 (`positive`) or ≥ 0. Commander checks it. */
  integer?: "positive" | "non-negative";
  /** The option may be given again; the values collect in a list. Commander only. */
  repeatable?: boolean;
}

/** One positional argument. */
export interface ArgumentSpec {
  name: string;
  required: boolean;
  description: string;
}

/** A command with its positionals and options. */
export interface CommandSpec {
  description: string;
  arguments: readonly ArgumentSpec[];
  options: readonly OptionSpec[];
}

/**
 * An option from its flags as help shows them, e.g. `-w, --working-dir <dir>`.
 *
 * @example
 * ```ts
 * const MODEL = option("-m, --model <model>", "model id");
 * ```
 */
export function option(
  flags: string,
  description: string,
  more: Omit<Partial<OptionSpec>, "long" | "short" | "value"> = {},
): OptionSpec {
  const match = /^(?:-(\w), )?--([\w-]+)(?: <(\w+)>)?$/.exec(flags);
  if (!match) throw new Error(`option flags must read "-x, --long <value>": ${flags}`);
  const [, short, long, value] = match;
  return { long, ...(short && { short }), ...(value && { value }), description, ...more };
}

/** `-w/--working-dir`: the workspace. */
export const WORKING_DIR = option(
  "-w, --working-dir <dir>",
  "workspace root (default: current directory)",
);

/** `--sandbox`: where the shell (and the tools that touch the system) run. */
export const SANDBOX = option("--sandbox <mode>", "run bash inside a sandbox", {
  choices: SANDBOX_MODES,
});

/** `--deadline`: how long a tool call may run. */
export const DEADLINE = option(
  "--deadline <spec>",
  "seconds a tool call may run: SECONDS, or TOOL=SECONDS,... (default 300; bash: " +
    "its timeout + 60)",
);

/** `--max-line-bytes`: the longest input line a line-based server accepts. */
export const MAX_LINE_BYTES = option(
  "--max-line-bytes <n>",
  "longest input line accepted, in bytes (default 268435456 = 256 MiB)",
);

/** The commands that have a fast path. */
export const PIPELINE_COMMANDS = {
  tools: {
    description: "list the tools; --json prints their definitions as sent to a provider",
    arguments: [],
    options: [
      {
        long: "provider",
        value: "provider",
        description: "render schemas for this provider",
        default: "openai",
      },
      { long: "json", description: "print definitions as JSON" },
      {
        long: "config-file",
        value: "file",
        description: "config whose allowed MCP servers are listed too (default: the usual search)",
      },
    ],
  },
  tool: {
    description: "run one tool call; ARGS is a JSON object, or read from stdin",
    arguments: [
      { name: "name", required: true, description: "tool name (case and underscores ignored)" },
      { name: "args", required: false, description: "arguments as a JSON object" },
    ],
    options: [WORKING_DIR, SANDBOX, DEADLINE],
  },
  serve: {
    description: "tool calls as NDJSON on stdin, results as NDJSON on stdout",
    arguments: [],
    options: [
      WORKING_DIR,
      {
        long: "parallel",
        description:
          "run calls at once: each line, and the calls of a batch; answer as they finish",
      },
      SANDBOX,
      DEADLINE,
      MAX_LINE_BYTES,
    ],
  },
} satisfies Record<string, CommandSpec>;

/** The key commander and the fast path use for an option: `working-dir` → `workingDir`. */
export function optionKey(long: string): string {
  return long.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** `deft run` / `deft interactive`: Deft's tools inside a container (src/container). */
export const CONTAINER_OPTIONS: readonly OptionSpec[] = [
  option(
    "--docker-image <image>",
    "run the tools in a new container of this image (never pulled); -w is a folder inside " +
      "(default: the image's WORKDIR)",
  ),
  option(
    "--docker-container-id <id>",
    "run the tools in this running container (never removed); Deft's runtime must be inside",
  ),
  option(
    "--dockerfile-path <file>",
    "build an image from this Dockerfile (its folder is the build context), then run the " +
      "tools in a new container of it; the image is removed at the end",
  ),
  option(
    "--docker-image-file <tar>",
    "load the image from this archive (docker save / podman save), then run the tools in a " +
      "new container of it",
  ),
  option(
    "--docker-keep",
    "keep the container Deft started (and an image it built), and print its id",
  ),
  option(
    "--container-runtime <runtime>",
    "docker or podman (default: docker when its daemon answers, else podman)",
    { choices: ["docker", "podman"] },
  ),
];

/**
 * `deft batch`: tasks with an image, SWE-bench dataset lines and their predictions. A line's
 * image is its own `image`/`dockerfile`, else `--image-template`'s, else the default image.
 */
export const BATCH_CONTAINER_OPTIONS: readonly OptionSpec[] = [
  option(
    "--docker-image <image>",
    "the default image: every line that names none (no image, dockerfile or --image-template " +
      "image) runs in a new container of it, on the repository inside (repo not needed)",
  ),
  option(
    "--dockerfile-path <file>",
    "build the default image once at the start (its folder is the build context); removed at " +
      "the end unless --docker-keep (with --slurm: each array task builds on its node)",
  ),
  option(
    "--docker-image-file <tar>",
    "load the default image once at the start; removed at the end if it was new, unless " +
      "--docker-keep (with --slurm: each array task loads on its node)",
  ),
  option(
    "--docker-keep",
    "keep each task's container (its id goes in result.json and is printed at the end)",
  ),
  option(
    "--docker-container-id <id>",
    "not for a batch (it starts one container per task): refused; name an image instead",
  ),
  option(
    "--image-template <template>",
    "the image of a SWE-bench line: {id}, {id_lower} or {swebench_id} filled in from its " +
      "instance_id (`swebench`: swebench/sweb.eval.x86_64.{swebench_id}:latest); a line's " +
      "image wins",
  ),
  option(
    "--model-name-or-path <name>",
    "model_name_or_path in predictions.jsonl (default: the model id)",
  ),
  option(
    "--container-runtime <runtime>",
    "docker or podman for the tasks with an image (default: docker when its daemon answers, " +
      "else podman)",
    { choices: ["docker", "podman"] },
  ),
];
