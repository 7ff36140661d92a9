/**
 * Where a session's tools act: a folder on the host, or a container's workspace. One interface for
 * both, so the session and the commands ask "is it a repository", "record its state", "what is its
 * patch" without asking which kind it is; both run the same patch algorithm (./patch.ts) over a
 * git place (the host's git, in the sandbox when there is one, or git through the container's
 * `exec`), so every filter applies in both.
 */
import type { Container } from "../container/container.ts";
import { type GitSandbox } from "../policy/git.ts";
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
  /** True when the workspace is inside a git work tree. */
  isRepository(): Promise<boolean>;
  /** Records the workspace's state (undefined outside a repository); throws when git fails. */
  recordBaseline(): Promise<WorkspaceBaseline | undefined>;
  /** The patch since `baseline` (else HEAD), new files included; "" outside a repository. */
  patch(baseline?: WorkspaceBaseline): Promise<string>;
}

/** A host folder; git runs in `sandbox` (the tool settings' sandbox) when it has one. */
export function hostWorkplace(workspace: string, sandbox?: GitSandbox): Workplace {
  return {
    workspace,
    description: workspace,
    isRepository: () => isGitRepo(workspace, sandbox),
    recordBaseline: () => recordBaseline(workspace, { sandbox }),
    patch: (baseline) => workspacePatch(workspace, { baseline, sandbox }),
  };
}

/** A container's workspace: git runs inside, through `exec`. */
export function containerWorkplace(container: Container): Workplace {
  const place = async () => (await import("../container/patch.ts")).containerPlace(container);
  return {
    workspace: container.workspace,
    description: `${container.workspace} in container ${container.id.slice(0, 12)} ` +
      `(${container.cli.program})`,
    isRepository: async () => {
      const r = await (await place()).git(["rev-parse", "--is-inside-work-tree"]);
      return r.ok && r.out.trim() === "true";
    },
    recordBaseline: async () => recordBaselineIn(await place(), container.workspace),
    patch: async (baseline) => patchIn(await place(), { baseline }),
  };
}
