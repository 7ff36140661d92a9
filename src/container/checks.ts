/**
 * Where the workspace is (a folder inside, or a host folder bound at its path) and whether Deft
 * can run in a container: its runtime starts there (glibc), the workspace is a folder there.
 */
import {
  type ContainerBind,
  type ContainerCli,
  containerExecLaunch,
} from "../policy/container_cli.ts";
import { runChild } from "../policy/process.ts";
import { type DeftInside, INSIDE_TEMP } from "./inside.ts";
import { ContainerError, QUERY_TIMEOUT_MS } from "./runtime.ts";

/** Host folders `-w` never binds: the system's own (a project lives below them). */
const SYSTEM_FOLDERS = new Set([
  "/",
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/home",
  "/lib",
  "/lib32",
  "/lib64",
  "/opt",
  "/proc",
  "/root",
  "/run",
  "/sbin",
  "/srv",
  "/sys",
  "/tmp",
  "/usr",
  "/var",
]);

/**
 * The workspace: `-w` naming an existing host folder is bound at the same path (read-write);
 * any other `-w` is a folder inside; no `-w`: the image's WORKDIR (else /).
 */
export function workspacePlan(
  workingDir: string | undefined,
  workdir: string | undefined,
  attached: boolean,
): { workspace: string; bind?: ContainerBind } {
  if (workingDir === undefined) return { workspace: workdir ?? "/" };
  let host: string | undefined;
  try {
    host = Deno.statSync(workingDir).isDirectory ? Deno.realPathSync(workingDir) : undefined;
  } catch {
    host = undefined;
  }
  if (host !== undefined && !attached) {
    if (SYSTEM_FOLDERS.has(host)) {
      throw new ContainerError(
        `-w ${workingDir} is the host's ${host}, which Deft does not bind into a container ` +
          "(it would hand the container a system folder). Name the folder inside the image " +
          "that holds the repository, or a project folder on the host.",
      );
    }
    return { workspace: host, bind: { host, container: host, readOnly: false } };
  }
  if (!workingDir.startsWith("/")) {
    throw new ContainerError(
      `-w ${workingDir}: with a container, -w names an absolute folder inside it (like ` +
        "/testbed), or an existing host folder to bind at the same path.",
    );
  }
  return { workspace: workingDir.replace(/(.)\/+$/, "$1") };
}

/** Runs a short command inside; its exit code and output. */
export async function execIn(
  cli: ContainerCli,
  id: string,
  argv: string[],
): Promise<{ code: number; output: string }> {
  try {
    const out = await runChild(containerExecLaunch(cli, id, { argv }), {
      signal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
    });
    const decoder = new TextDecoder();
    return {
      code: out.code,
      output: (decoder.decode(out.stdout) + decoder.decode(out.stderr)).trim(),
    };
  } catch (e) {
    return { code: -1, output: (e as Error).message };
  }
}

/**
 * The checks of `prepareInside` in one step, true when they all pass: Deft's runtime starts, the
 * workspace is a folder, Deft's folder is made. Anything else (no `sh` in the image, a check
 * that failed) is judged by the checks one by one. The paths are arguments ($1 Deft's runtime,
 * $2 the workspace, $3 Deft's folder), never part of the script.
 */
const CHECKS = `"$1" --version >/dev/null 2>&1 && [ -d "$2" ] && mkdir -p -m 700 "$3"`;

/** Answers of a runtime that had not yet marked the container running when `exec` came. */
export const NOT_YET_RUNNING = /is not running|state improper|not running/i;

/** What `checkedHostArgv`'s process says on stderr once the checks passed, before Deno starts. */
export const CHECKED_MARK = "deft: the checks passed";

/**
 * One `exec` for the checks and the tool host: the checks of `prepareInside`, then (all passed)
 * `CHECKED_MARK` on stderr and `inside.argv` in the workspace, in the same process. It ends
 * with code 97 before anything of Deft's runs when a check fails.
 */
export function checkedHostArgv(inside: DeftInside, workspace: string): string[] {
  return [
    "sh",
    "-c",
    `${CHECKS} || exit 97; echo '${CHECKED_MARK}' >&2; cd "$2" && shift 3 && exec "$@"`,
    "sh",
    inside.probe[0],
    workspace,
    INSIDE_TEMP,
    ...inside.argv,
  ];
}

/**
 * Checks that Deft can run inside (its Deno needs glibc's loader) and that the workspace is a
 * folder there, and makes Deft's private folder. One `exec` when all is well (each costs the
 * runtime's round trip, and they slow each other down); the checks one by one, for their
 * messages, when not.
 */
export async function prepareInside(
  cli: ContainerCli,
  id: string,
  image: string | undefined,
  inside: DeftInside,
  workspace: string,
): Promise<void> {
  const argv = ["sh", "-c", `${CHECKS} && echo ok`, "sh", inside.probe[0], workspace, INSIDE_TEMP];
  // The keeper may have started a moment before the runtime marks the container running.
  for (let tries = 0;; tries++) {
    const quick = await execIn(cli, id, argv);
    if (quick.code === 0 && quick.output === "ok") return;
    if (tries >= 20 || !NOT_YET_RUNNING.test(quick.output)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  await checkOneByOne(cli, id, image, inside, workspace);
}

/** `prepareInside`'s checks, each on its own, each failure with its message. */
async function checkOneByOne(
  cli: ContainerCli,
  id: string,
  image: string | undefined,
  inside: DeftInside,
  workspace: string,
): Promise<void> {
  const where = image ? `the image '${image}'` : `the container ${id}`;
  // At once (each exec costs the runtime's round trip); the answers are judged in order. Deft's
  // folder is made at once only in a container Deft started.
  const mkdir = () => execIn(cli, id, ["mkdir", "-p", "-m", "700", INSIDE_TEMP]);
  const [probe, ws, early] = await Promise.all([
    execIn(cli, id, inside.probe),
    execIn(cli, id, ["test", "-d", workspace]),
    image ? mkdir() : undefined,
  ]);
  if (probe.code !== 0 && !image) {
    // A running container cannot be given binds: Deft's runtime is there only when Deft
    // started the container (with --docker-keep) from this same Deft.
    throw new ContainerError(
      `Deft's runtime is not in the container ${id} (${inside.probe[0]} did not start: ` +
        `${probe.output.split("\n").at(-1) || `exit code ${probe.code}`}). A running ` +
        "container cannot be given Deft's code: use one a Deft started with --docker-keep, " +
        "or start a new one with --docker-image.",
    );
  }
  if (probe.code !== 0) {
    throw new ContainerError(
      `Deft's runtime (Deno, linked against glibc) cannot start in ${where}: ` +
        `${probe.output.split("\n").slice(-2).join(" ") || `exit code ${probe.code}`}. ` +
        "Images built on musl (Alpine) or with no C library (busybox, distroless/static) cannot " +
        "host Deft's tools; use a glibc-based image (Debian, Ubuntu, Fedora …).",
    );
  }
  if (ws.code !== 0) {
    throw new ContainerError(
      `the workspace ${workspace} is not a folder in ${where}. Name one that is with -w ` +
        "(an absolute path inside), or leave -w out to use the image's WORKDIR.",
    );
  }
  const made = early ?? await mkdir();
  if (made.code !== 0) {
    throw new ContainerError(`Deft could not make ${INSIDE_TEMP} inside ${where}: ${made.output}`);
  }
}
