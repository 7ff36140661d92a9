/**
 * A host folder as a session's workplace (./workplace_types.ts): git runs in the tool settings'
 * sandbox when there is one, checkpoints go to the host's store for the session, and a file the
 * user names is read here, pinned, as the editor would read it.
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import { type GitSandbox, gitSandbox, runGit } from "../policy/git.ts";
import { isInside } from "../policy/workspace.ts";
import { readWorkspaceFile } from "../tools/fs/workspace_read.ts";
import { checkSandbox } from "../tools/host/mod.ts";
import {
  type EarlyCheckpoints,
  hostCheckpointPlace,
  startCheckpointsEarly,
} from "./checkpoints.ts";
import { loadProjectInstructions } from "./instructions.ts";
import { isGitRepo, recordBaseline, workspacePatch } from "./patch.ts";
import {
  LIST_LIMIT,
  listedPaths,
  type PlaceRead,
  tooLarge,
  type Workplace,
} from "./workplace_types.ts";

/** A host folder; git runs in the tool settings' sandbox (see `settle`) when there is one. */
export function hostWorkplace(workspace: string): Workplace {
  let sandbox: GitSandbox | undefined;
  let early: EarlyCheckpoints | undefined;
  return {
    workspace,
    description: workspace,
    place: { workspace },
    onHost: true,
    closesOnSignals: false,
    settle(settings, tools) {
      // A missing bubblewrap is told as the tools tell it, before git is run in the sandbox.
      checkSandbox(settings, tools, workspace);
      sandbox = gitSandbox(workspace, settings);
      return settings;
    },
    linkStarter: () => Promise.resolve(undefined),
    instructions: () => loadProjectInstructions(workspace),
    hookPlace: () => ({ folder: workspace }),
    isRepository: () => isGitRepo(workspace, sandbox),
    notRepository: (flag) =>
      `${flag} needs a git repository, and ${workspace} is not inside one: run ` +
      `\`git init && git add -A && git commit -m base\` there first, or drop ${flag}.`,
    recordBaseline: () => recordBaseline(workspace, { sandbox }),
    patch: (baseline) => workspacePatch(workspace, { baseline, sandbox }),
    checkpointPlace: (sessionId, trajectory) =>
      hostCheckpointPlace(workspace, sessionId, sandbox, trajectory),
    startCheckpoints: () => early = startCheckpointsEarly(workspace, sandbox),
    resumeNote: () => undefined,
    readFile: (path, limit) => readHostFile(workspace, path, limit),
    listFiles: () => hostFiles(workspace),
    // A store made early that no checkpoint was taken in goes with the session.
    close: () => Promise.resolve(early?.release()),
  };
}

/** Reads a file named relative to `workspace` (or absolute inside it), checked as `readFile` says. */
async function readHostFile(workspace: string, path: string, limit: number): Promise<PlaceRead> {
  const absolute = isAbsolute(path) ? resolve(path) : resolve(workspace, path);
  let root = workspace;
  try {
    root = Deno.realPathSync(workspace);
  } catch { /* judged as written */ }
  if (!isInside(resolve(workspace), absolute) && !isInside(root, absolute)) {
    return { refused: "it is outside the workspace; only the workspace's files attach" };
  }
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(absolute);
  } catch {
    return { refused: "there is no such file in the workspace" };
  }
  if (info.isSymlink) {
    try {
      info = await Deno.stat(absolute);
    } catch {
      return { refused: "it is a link to nothing" };
    }
  }
  if (info.isDirectory) return { refused: "it is a folder; name a file in it" };
  if (!info.isFile) {
    return { refused: "it is not a regular file (a FIFO, socket or device is never read)" };
  }
  if (info.size > limit) return { refused: tooLarge(info.size, limit) };
  const bytes = readWorkspaceFile(root, absolute, limit);
  if (bytes === null || bytes === undefined) {
    return {
      refused: "it could not be read as a regular file inside the workspace (a link leading " +
        "out of it, or a file that changed while it was read)",
    };
  }
  return { bytes };
}

/** The folder's files: `git ls-files` under git (bounded), else a plain walk. */
async function hostFiles(workspace: string): Promise<string[]> {
  try {
    const listed = await runGit(
      workspace,
      ["ls-files", "--cached", "--others", "--exclude-standard", "-z"],
      { limits: { timeoutMs: 5000, maxOutputBytes: 8 * 1024 * 1024 } },
    );
    if (listed.ok) return listedPaths(listed.bytes);
  } catch { /* no git: walk */ }
  const files: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (files.length >= LIST_LIMIT || depth > 12) return;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const full = join(dir, e.name);
      if (e.isDirectory) walk(full, depth + 1);
      else if (e.isFile) files.push(relative(workspace, full));
    }
  };
  walk(workspace, 0);
  return files;
}
