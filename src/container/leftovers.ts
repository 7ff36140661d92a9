/**
 * Deft's labels, and the sweep: what a Deft of this install started or built and did not live to
 * remove, proven its own (ownership.ts), goes at the next start; nothing else does.
 */
import {
  type ContainerCli,
  containerImageLaunch,
  containerImageRemoveLaunch,
  containerImagesLaunch,
  containerInspectLaunch,
  containerListLaunch,
  containerRemoveLaunch,
} from "../policy/container_cli.ts";
import { provenLeftover, pruneRuns } from "./ownership.ts";
import { query } from "./runtime.ts";

/** The label every container Deft starts carries. */
export const DEFT_LABEL = "deft.container";

export const KEEP_LABEL = "deft.keep";

/**
 * The labels of an image Deft builds. Not the containers' own: a container inherits its image's
 * labels, and one started from a kept image must not count as kept, or as another Deft's.
 */
export const IMAGE_LABEL = "deft.image";

export const IMAGE_KEEP_LABEL = "deft.image.keep";

/**
 * Removes the containers this install's Deft started and did not live to remove (killed while
 * the daemon was down, say): labelled, not kept, proven this install's by their HMAC, their run
 * over (its lock free). A container that merely carries Deft's labels, or whose run still lives
 * (in any PID namespace), stays. Returns their ids.
 */
export async function sweepLeftovers(cli: ContainerCli): Promise<string[]> {
  const listed = await query(containerListLaunch(cli, `${DEFT_LABEL}=1`));
  if (!listed.ok) return [];
  const ids = listed.stdout.split("\n").map((s) => s.trim()).filter(Boolean);
  if (ids.length === 0) return [];
  const inspected = await query(containerInspectLaunch(cli, ids));
  let details: {
    Id: string;
    Name?: string;
    Config?: { Labels?: Record<string, string> | null };
  }[] = [];
  try {
    details = JSON.parse(inspected.stdout);
  } catch {
    return [];
  }
  const gone: string[] = [];
  for (const c of details) {
    const labels = c.Config?.Labels ?? {};
    const name = (c.Name ?? "").replace(/^\//, "");
    if (labels[KEEP_LABEL] === "1" || !name) continue;
    if (await provenLeftover("container", name, labels)) {
      gone.push(c.Id);
    }
  }
  if (gone.length > 0) await query(containerRemoveLaunch(cli, gone));
  await pruneRuns();
  return gone;
}

/** An image's tags as Deft named them (podman puts `localhost/` before a name without a host). */
function imageTags(info: { RepoTags?: string[] | null }): string[] {
  return (info.RepoTags ?? []).map((t) => t.replace(/^localhost\//, ""));
}

/**
 * Removes the images this install's Deft built and did not live to remove: labelled, not kept,
 * proven by their HMAC, their run over. Returns their ids. An image a container still uses stays.
 */
export async function sweepImages(cli: ContainerCli): Promise<string[]> {
  const listed = await query(containerImagesLaunch(cli, `${IMAGE_LABEL}=1`));
  if (!listed.ok) return [];
  const ids = [...new Set(listed.stdout.split("\n").map((s) => s.trim()).filter(Boolean))];
  const gone: string[] = [];
  for (const id of ids) {
    const inspected = await query(containerImageLaunch(cli, id));
    let labels: Record<string, string> = {};
    let tags: string[] = [];
    try {
      const [info] = JSON.parse(inspected.stdout) as {
        RepoTags?: string[] | null;
        Labels?: Record<string, string> | null;
        Config?: { Labels?: Record<string, string> | null };
      }[];
      labels = info?.Config?.Labels ?? info?.Labels ?? {};
      tags = info ? imageTags(info) : [];
    } catch {
      continue;
    }
    if (labels[IMAGE_KEEP_LABEL] === "1") continue;
    for (const tag of tags) {
      if (await provenLeftover("image", tag, labels)) {
        gone.push(id);
        break;
      }
    }
  }
  // One at a time: one in use must not keep the others.
  for (const id of gone) await query(containerImageRemoveLaunch(cli, [id]));
  return gone;
}
