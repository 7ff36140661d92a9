/**
 * The container runtime Deft drives (docker or podman), how it asks the runtime's client a
 * question, and the errors every container step throws. Every argv comes from the process
 * policy's container views (src/policy/container_cli.ts).
 */
import { UsageError } from "../errors.ts";
import { type ContainerCli, containerProbeLaunch } from "../policy/container_cli.ts";
import { runChild } from "../policy/process.ts";

/** The runtimes Deft drives. */
export const CONTAINER_RUNTIMES = ["docker", "podman"] as const;

export type ContainerRuntime = (typeof CONTAINER_RUNTIMES)[number];

/** How long a runtime client may take to answer a question. */
export const QUERY_TIMEOUT_MS = 30_000;

/** How long `--dockerfile-path`'s build and `--docker-image-file`'s load may take. */
export const BUILD_TIMEOUT_MS = 30 * 60_000;

/** A container problem the user can fix: printed as it is, exit code 2. */
export class ContainerError extends UsageError {
  constructor(message: string) {
    super(message);
    this.name = "ContainerError";
  }
}

/** Neither runtime can be used. */
export class ContainerRuntimeUnavailableError extends ContainerError {
  constructor(message: string) {
    super(message);
    this.name = "ContainerRuntimeUnavailableError";
  }
}

/** Runs one runtime client command to its end (bounded), with its output as text. */
export async function query(
  launch: ReturnType<typeof containerProbeLaunch>,
  timeoutMs = QUERY_TIMEOUT_MS,
): Promise<{ ok: boolean; stdout: string; stderr: string; missing?: boolean }> {
  try {
    const out = await runChild(launch, { signal: AbortSignal.timeout(timeoutMs) });
    const decoder = new TextDecoder();
    return {
      ok: out.success,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr).trim(),
    };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      return { ok: false, stdout: "", stderr: "", missing: true };
    }
    return { ok: false, stdout: "", stderr: (e as Error).message };
  }
}

/** The client for `runtime`, with podman's OCI runtime. */
function cliFor(runtime: ContainerRuntime, podmanRuntime?: string): ContainerCli {
  if (runtime === "docker") return { program: "docker" };
  return { program: "podman", ociRuntime: podmanRuntime ?? defaultPodmanRuntime() };
}

/** The client `chooseRuntime` most likely picks: the one asked for, else docker. */
export function likelyRuntime(requested?: ContainerRuntime, podmanRuntime?: string): ContainerCli {
  return cliFor(requested ?? "docker", podmanRuntime);
}

/** runc when it is installed: podman's default crun fails on cgroups-v1 hybrid hosts. */
function defaultPodmanRuntime(): string | undefined {
  for (const dir of ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/bin"]) {
    try {
      if (Deno.statSync(`${dir}/runc`).isFile) return "runc";
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/**
 * The runtime to use: the one asked for, which must answer; else docker when its daemon
 * answers, else podman. Throws ContainerRuntimeUnavailableError naming what each said.
 */
export async function chooseRuntime(
  requested?: ContainerRuntime,
  podmanRuntime?: string,
): Promise<ContainerCli> {
  const tried: string[] = [];
  for (const runtime of requested ? [requested] : CONTAINER_RUNTIMES) {
    const cli = cliFor(runtime, podmanRuntime);
    const answer = await query(containerProbeLaunch(cli));
    if (answer.ok) return cli;
    tried.push(
      answer.missing
        ? `${runtime}: not installed (not on PATH)`
        : `${runtime}: ${answer.stderr.split("\n").slice(-3).join(" ") || "no answer"}`,
    );
    // Docker is installed and its daemon is down: that is the error, not one about Podman's
    // images (Podman holds none of Docker's).
    if (!requested && runtime === "docker" && !answer.missing) {
      throw new ContainerRuntimeUnavailableError(
        `the Docker daemon does not answer (${tried[0]}). Start it (or point DOCKER_HOST at ` +
          "one), or use Podman with --container-runtime podman.",
      );
    }
  }
  throw new ContainerRuntimeUnavailableError(
    `no container runtime is usable (${tried.join("; ")}). ` +
      (requested === "docker" || !requested
        ? "Start the Docker daemon (or point DOCKER_HOST at one), "
        : "") +
      "install Podman (apt-get install podman runc), or choose one with --container-runtime.",
  );
}

/** The runtime's words on a failure, minus the banners it prints every time. */
export function saidBy(stderr: string, lines = 4): string {
  return stderr.split("\n").map((l) => l.trim())
    .filter((l) =>
      l &&
      !/DEPRECATED|buildx|BuildKit|docs\.docker\.com\/go|^Sending build context|^Step \d/.test(l)
    )
    .slice(-lines).join(" ");
}

/** A fresh name for a container Deft starts. */
export function containerName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `deft-${Deno.pid}-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
