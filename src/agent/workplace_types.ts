/**
 * What a workplace is (./workplace.ts tells why there is one): the interface both kinds keep,
 * and the few helpers they share.
 */
import type { ToolSettings } from "../tools/base.ts";
import type { LinkStarter } from "../tools/host/mod.ts";
import type { HookContainer } from "../hooks/hooks.ts";
import type { SessionPlace } from "../trajectory/conversation.ts";
import type { Trajectory } from "../trajectory/recorder.ts";
import type { CheckpointPlace, EarlyCheckpoints } from "./checkpoints.ts";
import type { ProjectInstructions } from "./instructions.ts";
import type { WorkspaceBaseline } from "./patch.ts";

/** A file of the workspace read for the user (an `@` mention): its bytes, or why not. */
export type PlaceRead = { bytes: Uint8Array } | { refused: string };

/** Where the session's hooks run (always on the host) and what they are told of the place. */
export interface HookPlace {
  /** The host folder the hooks run in. */
  folder: string;
  /** The container the tools run in, as the hooks are told it (`DEFT_CONTAINER`…). */
  told?: HookContainer;
}

/** A session's workspace and what Deft itself does there (the tools are started apart). */
export interface Workplace {
  /** The workspace root, as the tools see it. */
  readonly workspace: string;
  /** One line saying where: "/home/me/project", "/testbed in container 1a2b3c4d5e6f (podman)". */
  readonly description: string;
  /**
   * Where the session is recorded as working (its trajectory's place): sessions recorded in the
   * same place are the ones `--continue`, `--resume` and the pickers offer.
   */
  readonly place: SessionPlace;
  /**
   * True when the workspace is a folder of this host, whose files Deft may look at itself (the
   * approval preview's paths, an ACP client's file system, `/init`); false when the same path
   * names another file where the tools act.
   */
  readonly onHost: boolean;
  /**
   * True when something lives on outside Deft until `close` (a container it started): SIGTERM
   * and SIGHUP must then close the session rather than leave it behind.
   */
  readonly closesOnSignals: boolean;
  /**
   * The tool settings for this place, from the configured ones: on the host bubblewrap must be
   * there when a sandbox is asked for (throws as the tools would); a container is itself the
   * sandbox (none inside). Git runs under what this returns.
   */
  settle(settings: ToolSettings, tools: readonly string[]): ToolSettings;
  /** How the tools' host starts there (undefined: the default, on the host). */
  linkStarter(): Promise<LinkStarter | undefined>;
  /** Why MCP servers are not started for this place (undefined: they are). */
  readonly mcpRefusal?: string;
  /** The project instructions (AGENTS.md) for the system prompt. */
  instructions(): Promise<ProjectInstructions>;
  /** Where the session's hooks run and what they are told of the place. */
  hookPlace(): HookPlace;
  /** True when the workspace is inside a git work tree. */
  isRepository(): Promise<boolean>;
  /** What to tell the user when `flag` needs a repository and the workspace is in none. */
  notRepository(flag: string): string;
  /** Records the workspace's state (undefined outside a repository); throws when git fails. */
  recordBaseline(): Promise<WorkspaceBaseline | undefined>;
  /** The patch since `baseline` (else HEAD), new files included; "" outside a repository. */
  patch(baseline?: WorkspaceBaseline): Promise<string>;
  /**
   * Where the checkpoints of session `sessionId` (recorded in the trajectory file `trajectory`)
   * go: the host's store for the session, or a store inside the container.
   */
  checkpointPlace(sessionId: string, trajectory: string): Promise<CheckpointPlace>;
  /**
   * Makes the store of a new session id and starts its sandboxed git now, in the background,
   * so the first checkpoint does not wait for it (./checkpoint_early.ts); undefined when there
   * is nothing to start early (no sandbox, or not on the host).
   */
  startCheckpoints?(): EarlyCheckpoints | undefined;
  /**
   * Where the checkpoints of an earlier session recorded here are, to rewind its files (a store
   * inside this very container); undefined on the host, whose stores are found by session id.
   * Throws CheckpointError when they cannot be here.
   */
  readonly recordedCheckpoints?: (trajectory: Trajectory) => Promise<CheckpointPlace>;
  /**
   * What to tell the user when the session resumed, recorded as `trajectory`, goes on here with
   * other files than it left (a new container of its image); undefined when nothing differs.
   */
  resumeNote(trajectory: Trajectory): string | undefined;
  /**
   * Reads a file the user named (`@path`), judged against the workspace as the tools see it and
   * read where they act: a regular file inside the workspace (links followed, never leading
   * out), at most `limit` bytes, never a FIFO or device; bounded in time. Why not, otherwise.
   */
  readFile(path: string, limit: number): Promise<PlaceRead>;
  /** The workspace's files (relative paths) for completion; .gitignore respected under git. */
  listFiles(): Promise<string[]>;
  /**
   * Ends the place when the session ends: a started container (with `baseline`'s private store
   * inside it) is removed unless kept. Nothing to do on the host. Throws when that fails.
   */
  close(baseline?: WorkspaceBaseline): Promise<void>;
}

/** Most files `listFiles` lists. */
export const LIST_LIMIT = 20_000;

/** Why a file over `limit` bytes is not read for the user. */
export function tooLarge(size: number | string, limit: number): string {
  return `it is ${size} bytes, over the ${limit}-byte limit for an attachment; ask the model ` +
    `to read the part you need`;
}

/** The NUL-separated paths `git ls-files -z` printed, at most LIST_LIMIT of them. */
export function listedPaths(bytes: Uint8Array): string[] {
  return new TextDecoder().decode(bytes).split("\0").filter((p) => p !== "").slice(0, LIST_LIMIT);
}
