/**
 * A container's workspace as a session's workplace (./workplace_types.ts): git, checkpoints and
 * the files the user names are all reached through the runtime's `exec`, each step bounded; the
 * session's hooks run on the host, told the container. The container goes when the session does.
 */
import { posix } from "node:path";
import type { Container } from "../container/container.ts";
import type { GitLimits } from "../policy/git.ts";
import { containerLinkStarter } from "../tools/host/mod.ts";
import { sameContainer, type SessionPlace } from "../trajectory/conversation.ts";
import { containerMarker, type Trajectory } from "../trajectory/recorder.ts";
import { readEnv } from "../env.ts";
import { containerCheckpointPlace, recordedContainerPlace } from "./checkpoints.ts";
import { patchIn, recordBaselineIn } from "./patch.ts";
import { isInside } from "../policy/workspace.ts";
import { listedPaths, type PlaceRead, tooLarge, type Workplace } from "./workplace_types.ts";

/** A container's workspace: git runs inside, through `exec`, each step within `limits`. */
export function containerWorkplace(container: Container, limits?: GitLimits): Workplace {
  const place = async () =>
    (await import("../container/patch.ts")).containerPlace(container, limits);
  const { workspace } = container;
  const where: SessionPlace = { workspace, container: containerMarker(container) };
  return {
    workspace,
    description: `${workspace} in container ${container.id.slice(0, 12)} ` +
      `(${container.cli.program})`,
    place: where,
    // The same path names another file on the host.
    onHost: false,
    // A started container outlives Deft unless removed.
    closesOnSignals: true,
    // The container is the sandbox: no bubblewrap on the host or inside.
    settle: (settings) => ({ ...settings, sandbox: "none" }),
    linkStarter: () => containerLinkStarter(container),
    // MCP servers run on the host, where the container's paths mean nothing.
    mcpRefusal: "MCP servers are not started when the tools run in a container",
    // The workspace is not a host folder: reading it here would read the host's.
    instructions: () => Promise.resolve({ files: [], prompt: "" }),
    // Hooks run on the host, over the folder Deft started in, told the container's id, runtime
    // and workspace.
    hookPlace: () => ({
      folder: hostFolder(),
      told: { id: container.id, runtime: container.cli.program, workspace },
    }),
    isRepository: async () => {
      const r = await (await place()).git(["rev-parse", "--is-inside-work-tree"]);
      return r.ok && r.out.trim() === "true";
    },
    notRepository: (flag) =>
      `${flag} needs a git repository, and ${workspace} in the container is not ` +
      `inside one: name the repository's folder with -w, or drop ${flag}.`,
    recordBaseline: async () => recordBaselineIn(await place(), workspace),
    patch: async (baseline) => patchIn(await place(), { baseline }),
    // A store inside, kept for as long as the container.
    checkpointPlace: () => containerCheckpointPlace(container),
    // An earlier session's store inside this container (rewind.ts checks it was this one).
    recordedCheckpoints: (trajectory) => recordedContainerPlace(container, trajectory),
    resumeNote: (trajectory) => movedContainerNote(trajectory, where),
    readFile: (path, limit) => readInContainer(container, path, limit),
    listFiles: () => containerFiles(container),
    close: async (baseline) => {
      // The baseline's private store is inside: gone before a kept container is left behind.
      await baseline?.dispose();
      await container.close();
    },
  };
}

/**
 * The one line that says where a resumed container session's files come from, or undefined on
 * the host and in the very container the session was recorded in: a new container of the image
 * holds the image's files, not what the earlier container changed.
 */
export function movedContainerNote(
  trajectory: Trajectory,
  place: SessionPlace,
): string | undefined {
  const before = trajectory.container;
  const now = place.container;
  if (!before || !now || sameContainer(before.id, now.id)) return undefined;
  const where = now.image === null ? `the container ${now.id}` : `container ${now.id.slice(0, 12)}`;
  return `note: the session goes on in ${where}, not in the one it was recorded in ` +
    `(${before.id.slice(0, 12)}): the files there are as this container has them, and the ` +
    `earlier container's changes are not here (only a container kept with --docker-keep and ` +
    `attached with --docker-container-id keeps them).`;
}

/** The folder Deft was started in (the home folder when it is gone). */
function hostFolder(): string {
  try {
    return Deno.cwd();
  } catch {
    return readEnv("HOME") ?? "/";
  }
}

/**
 * Checks and reads a file inside a container, as the container sees its workspace (the rules of
 * the host's read): the path resolved there (links followed) must be a regular file inside the
 * workspace's real path and within the size limit; only then is it read, at most that many
 * bytes. Exit codes say why not; stdout is the file.
 */
const READ_SCRIPT = `ws=$(realpath -e -- "$1") || exit 10
case "$2" in /*) p=$2 ;; *) p=$ws/$2 ;; esac
if [ ! -e "$p" ]; then if [ -h "$p" ]; then exit 12; fi; exit 11; fi
r=$(realpath -e -- "$p") || exit 12
case "$r" in "$ws"/*) ;; *) exit 13 ;; esac
if [ -d "$r" ]; then exit 14; fi
if [ ! -f "$r" ]; then exit 15; fi
size=$(stat -c %s -- "$r") || exit 15
if [ "$size" -gt "$3" ]; then echo "$size"; exit 16; fi
exec head -c "$3" -- "$r"`;

/** Why the container's check refused a file, by the script's exit code. */
const REFUSALS: Record<number, string> = {
  10: "the container's workspace could not be resolved",
  11: "there is no such file in the container's workspace",
  12: "it is a link to nothing",
  13: "it leads outside the workspace (a link out of it); only the workspace's files attach",
  14: "it is a folder; name a file in it",
  15: "it is not a regular file (a FIFO, socket or device is never read)",
};

/**
 * Reads the file `path` names in the container: judged against the workspace as the container
 * sees it, checked and read inside (never on the host, where that path means another file), with
 * a deadline and bounded output.
 */
async function readInContainer(
  container: Container,
  path: string,
  limit: number,
): Promise<PlaceRead> {
  const workspace = container.workspace;
  const absolute = posix.isAbsolute(path) ? posix.resolve(path) : posix.resolve(workspace, path);
  if (!isInside(posix.resolve(workspace), absolute)) {
    return { refused: "it is outside the workspace; only the workspace's files attach" };
  }
  const [{ containerExecLaunch }, { runLimited }] = await Promise.all([
    import("../policy/process.ts"),
    import("../policy/git.ts"),
  ]);
  let result;
  try {
    result = await runLimited(
      containerExecLaunch(container.cli, container.id, {
        argv: ["sh", "-c", READ_SCRIPT, "sh", workspace, absolute, String(limit)],
      }),
      `reading @${path} (in the container)`,
      undefined,
      { timeoutMs: 10_000, maxOutputBytes: limit + 64 },
    );
  } catch (e) {
    return { refused: `it could not be read in the container (${(e as Error).message})` };
  }
  if (result.code === 16) return { refused: tooLarge(result.out.trim(), limit) };
  if (!result.ok) {
    return {
      refused: REFUSALS[result.code] ?? `it could not be read in the container (exit ` +
          `${result.code}: ${result.err.trim().slice(0, 200)})`,
    };
  }
  return { bytes: result.bytes };
}

/**
 * The container workspace's files: `git ls-files` run inside (hardened, bounded); none outside
 * a repository there.
 */
async function containerFiles(container: Container): Promise<string[]> {
  try {
    const { containerPlace } = await import("../container/patch.ts");
    const listed = await containerPlace(container, {
      timeoutMs: 5000,
      maxOutputBytes: 8 * 1024 * 1024,
    }).git(["ls-files", "--cached", "--others", "--exclude-standard", "-z"]);
    return listed.ok ? listedPaths(listed.bytes) : [];
  } catch {
    return [];
  }
}
