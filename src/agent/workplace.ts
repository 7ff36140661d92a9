/**
 * Where a session's tools act: a folder on the host, or a container's workspace. One interface for
 * both, so the session and the commands ask "which settings do the tools get", "how does their
 * host start", "which instructions", "is it a repository", "record its state", "what is its
 * patch" without asking which kind it is. Both run the same patch algorithm (./patch.ts) over a
 * git place (the host's git, in the sandbox when there is one, or git through the container's
 * `exec`), so every filter applies in both.
 */
import type { Container } from "../container/container.ts";
import { type GitLimits, type GitSandbox, gitSandbox } from "../policy/git.ts";
import type { ToolSettings } from "../tools/base.ts";
import { checkSandbox, containerLinkStarter, type LinkStarter } from "../tools/host/mod.ts";
import { loadProjectInstructions, type ProjectInstructions } from "./instructions.ts";
import {
  isGitRepo,
  patchIn,
  recordBaseline,
  recordBaselineIn,
  type WorkspaceBaseline,
  workspacePatch,
} from "./patch.ts";

/** A session's workspace and what Deft itself does there (the tools are started apart). */
export interface Workplace {
  /** The workspace root, as the tools see it. */
  readonly workspace: string;
  /** One line saying where: "/home/me/project", "/testbed in container 1a2b3c4d5e6f (podman)". */
  readonly description: string;
  /** The container the tools run in, if any (for the trajectory, the approval gate, `/init`). */
  readonly container?: Container;
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
  /** True when the workspace is inside a git work tree. */
  isRepository(): Promise<boolean>;
  /** What to tell the user when `flag` needs a repository and the workspace is in none. */
  notRepository(flag: string): string;
  /** Records the workspace's state (undefined outside a repository); throws when git fails. */
  recordBaseline(): Promise<WorkspaceBaseline | undefined>;
  /** The patch since `baseline` (else HEAD), new files included; "" outside a repository. */
  patch(baseline?: WorkspaceBaseline): Promise<string>;
}

/** A host folder; git runs in the tool settings' sandbox (see `settle`) when there is one. */
export function hostWorkplace(workspace: string): Workplace {
  let sandbox: GitSandbox | undefined;
  return {
    workspace,
    description: workspace,
    settle(settings, tools) {
      // A missing bubblewrap is told as the tools tell it, before git is run in the sandbox.
      checkSandbox(settings, tools, workspace);
      sandbox = gitSandbox(workspace, settings);
      return settings;
    },
    linkStarter: () => Promise.resolve(undefined),
    instructions: () => loadProjectInstructions(workspace),
    isRepository: () => isGitRepo(workspace, sandbox),
    notRepository: (flag) =>
      `${flag} needs a git repository, and ${workspace} is not inside one: run ` +
      `\`git init && git add -A && git commit -m base\` there first, or drop ${flag}.`,
    recordBaseline: () => recordBaseline(workspace, { sandbox }),
    patch: (baseline) => workspacePatch(workspace, { baseline, sandbox }),
  };
}

/** A container's workspace: git runs inside, through `exec`, each step within `limits`. */
export function containerWorkplace(container: Container, limits?: GitLimits): Workplace {
  const place = async () =>
    (await import("../container/patch.ts")).containerPlace(container, limits);
  return {
    workspace: container.workspace,
    description: `${container.workspace} in container ${container.id.slice(0, 12)} ` +
      `(${container.cli.program})`,
    container,
    // The container is the sandbox: no bubblewrap on the host or inside.
    settle: (settings) => ({ ...settings, sandbox: "none" }),
    linkStarter: () => containerLinkStarter(container),
    // MCP servers run on the host, where the container's paths mean nothing.
    mcpRefusal: "MCP servers are not started when the tools run in a container",
    // The workspace is not a host folder: reading it here would read the host's.
    instructions: () => Promise.resolve({ files: [], prompt: "" }),
    isRepository: async () => {
      const r = await (await place()).git(["rev-parse", "--is-inside-work-tree"]);
      return r.ok && r.out.trim() === "true";
    },
    notRepository: (flag) =>
      `${flag} needs a git repository, and ${container.workspace} in the container is not ` +
      `inside one: name the repository's folder with -w, or drop ${flag}.`,
    recordBaseline: async () => recordBaselineIn(await place(), container.workspace),
    patch: async (baseline) => patchIn(await place(), { baseline }),
  };
}
