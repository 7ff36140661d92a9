/**
 * The images a container is started from: `--dockerfile-path` builds one, `--docker-image-file`
 * loads one (under a name of Deft's own, the user's names left as they were), and what Deft made
 * goes when the run ends unless kept.
 */
import { dirname, resolve } from "node:path";
import {
  checkContainerWord,
  containerBuildLaunch,
  type ContainerCli,
  containerImageLaunch,
  containerImageRemoveLaunch,
  containerImagesLaunch,
  containerImageTagsLaunch,
  containerLoadLaunch,
  containerTagLaunch,
} from "../policy/container_cli.ts";
import { IMAGE_KEEP_LABEL, IMAGE_LABEL, sweepImages } from "./leftovers.ts";
import { checkContainerOptions, type ContainerOptions } from "./options.ts";
import { stampLabels } from "./ownership.ts";
import {
  BUILD_TIMEOUT_MS,
  chooseRuntime,
  ContainerError,
  containerName,
  query,
  saidBy,
} from "./runtime.ts";

/** An existing regular file named by `flag`, as an absolute path; a ContainerError if not. */
function givenFile(flag: string, path: string, what: string): string {
  const absolute = resolve(path);
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(absolute);
  } catch (e) {
    throw new ContainerError(
      `${flag} ${path}: ${
        e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message
      }. Name ${what}.`,
    );
  }
  if (!info.isFile) throw new ContainerError(`${flag} ${path} is not a file. Name ${what}.`);
  return absolute;
}

/**
 * `--dockerfile-path`: builds the Dockerfile (its folder is the build context) into an image
 * named and labelled for this Deft, so that it can be removed when the run ends. Deft never pulls:
 * a base image (FROM) that is not in the runtime's images is named.
 */
async function buildImage(cli: ContainerCli, opts: ContainerOptions): Promise<string> {
  const dockerfile = givenFile(
    "--dockerfile-path",
    opts.dockerfile!,
    "the Dockerfile to build (its folder is the build context)",
  );
  const context = dirname(dockerfile);
  const tag = `${containerName().replace(/^deft-/, "deft-built-")}:latest`;
  const labels: Record<string, string> = {
    [IMAGE_LABEL]: "1",
    ...await stampLabels("image", tag),
  };
  if (opts.keep) labels[IMAGE_KEEP_LABEL] = "1";
  opts.note?.(`building an image from ${dockerfile} (context ${context}) with ${cli.program}`);
  const built = await query(
    containerBuildLaunch(cli, {
      dockerfile,
      context,
      tag,
      labels,
      network: opts.network ? "host" : "none",
    }),
    BUILD_TIMEOUT_MS,
  );
  if (built.ok) return tag;
  // A half-made image (podman can leave one) goes too.
  await query(containerImageRemoveLaunch(cli, [tag]));
  const said = saidBy(built.stderr);
  const base = /Step \d+\/\d+ : FROM\s+(\S+)/i.exec(built.stderr)?.[1] ??
    /(?:creating build container:|failed to resolve source metadata for|pull access denied for) ([^\s:,]+(?::[^\s:,]+)?)/
      .exec(built.stderr)?.[1];
  if (
    /image not known|pull access denied|failed to resolve source metadata|registry|no such host|dial tcp|manifest unknown|repository does not exist/i
      .test(built.stderr)
  ) {
    throw new ContainerError(
      `the Dockerfile ${dockerfile} starts FROM ${
        base ? `'${base}', which` : "an image that"
      } is not in ${cli.program}'s images, and Deft never pulls (${said}). ` +
        `List them with \`${cli.program} images\`; pull, load or build that image first.`,
    );
  }
  throw new ContainerError(
    `${cli.program} could not build ${dockerfile}${
      said ? `: ${said}` : built.missing ? ": not installed" : ""
    }. ` +
      (opts.network
        ? ""
        : "The build's RUN steps have no network (container.allow_network: false). ")
        .concat("Fix the Dockerfile, or build the image yourself and use --docker-image."),
  );
}

/** The ids of every image the runtime holds, without the `sha256:` prefix. */
async function imageIds(cli: ContainerCli): Promise<Set<string>> {
  const listed = await query(containerImagesLaunch(cli));
  return new Set(listed.stdout.split("\n").map((s) => s.trim().replace(/^sha256:/, "")));
}

/** Every tag the runtime holds (podman's `localhost/` left off) with its image's id. */
async function imageTagIds(cli: ContainerCli): Promise<Map<string, string>> {
  const listed = await query(containerImageTagsLaunch(cli));
  const tags = new Map<string, string>();
  for (const line of listed.stdout.split("\n")) {
    const [tag, id] = line.trim().split(" ");
    if (!tag || !id || tag.includes("<none>")) continue;
    tags.set(tag.replace(/^localhost\//, ""), id.replace(/^sha256:/, ""));
  }
  return tags;
}

/** An image's id, without the `sha256:` prefix. */
async function imageId(cli: ContainerCli, ref: string): Promise<string | undefined> {
  const answer = await query(containerImageLaunch(cli, ref));
  try {
    const [info] = JSON.parse(answer.stdout) as { Id?: string }[];
    return info?.Id?.replace(/^sha256:/, "");
  } catch {
    return undefined;
  }
}

/** An image Deft built or loaded for a run. */
export interface Made {
  /** The name Deft runs it by (one of its own). */
  ref: string;
  /** The image was not in the runtime before: it goes at the end (unless kept). */
  isNew: boolean;
  /** What to remove at the end (unless kept): Deft's own name, and the tags the load added. */
  cleanup: string[];
}

/**
 * `--docker-image-file`: loads the archive's images and takes the first one under a name of
 * Deft's own. A tag the archive holds that the runtime already gave another image (the user's
 * own `myapp:dev`) is given back to that image at once: a load must not take a user's name over.
 * At the end Deft's name goes, and the image too when it is new to the runtime.
 */
export async function loadImage(cli: ContainerCli, opts: ContainerOptions): Promise<Made> {
  const what = "an image archive written by `docker save` or `podman save`";
  const tar = givenFile("--docker-image-file", opts.imageFile!, what);
  const [before, tagsBefore] = await Promise.all([imageIds(cli), imageTagIds(cli)]);
  opts.note?.(`loading the image in ${tar} with ${cli.program}`);
  const loaded = await query(containerLoadLaunch(cli, tar), BUILD_TIMEOUT_MS);
  const refs = [...loaded.stdout.matchAll(/^Loaded image(?:\(s\))?(?: ID)?: *(.+)$/gm)]
    .flatMap((m) => m[1].split(",")).map((r) => r.trim()).filter(Boolean);
  if (!loaded.ok || refs.length === 0) {
    const said = saidBy(loaded.stderr || loaded.stdout, 2);
    throw new ContainerError(
      `${cli.program} could not load an image from ${tar}${said ? ` (${said})` : ""}: it must be ` +
        `${what} (a tar, plain or gzip-compressed).`,
    );
  }
  for (const ref of refs) {
    try {
      checkContainerWord("image", ref);
    } catch (e) {
      throw new ContainerError(`${tar} holds an image named oddly: ${(e as Error).message}`);
    }
  }
  const digest = /^sha256:|^[0-9a-f]{64}$/;
  // What each name holds now: the loaded image.
  const loadedIds = new Map<string, string | undefined>();
  for (const ref of refs) {
    loadedIds.set(ref, digest.test(ref) ? ref.replace(/^sha256:/, "") : await imageId(cli, ref));
  }
  const first = refs[0];
  const id = loadedIds.get(first);
  if (id === undefined) throw new ContainerError(`${tar} was loaded, but its image is not found.`);
  if (refs.length > 1) opts.note?.(`${tar} holds ${refs.length} images; using ${first}`);
  // What each name held before the load (podman's `localhost/` left off).
  const previousOf = (ref: string) => {
    const tag = ref.replace(/^localhost\//, "");
    return tagsBefore.get(tag) ?? tagsBefore.get(`${tag}:latest`);
  };
  const takenOver = (ref: string) => {
    const previous = previousOf(ref);
    const now = loadedIds.get(ref);
    return !digest.test(ref) && previous !== undefined && now !== undefined && previous !== now;
  };
  // The first image runs under its own name, unless that name was one of the user's images':
  // then under a name of Deft's, given before the user's name goes back (an image keeps a name).
  let own: string | undefined;
  if (takenOver(first)) {
    own = `${containerName().replace(/^deft-/, "deft-loaded-")}:latest`;
    const tagged = await query(containerTagLaunch(cli, id, own));
    if (!tagged.ok) {
      throw new ContainerError(
        `${cli.program} could not name the image loaded from ${tar}: ${saidBy(tagged.stderr)}`,
      );
    }
  }
  // Every name the load moved off a user's image goes back to it.
  const added: string[] = [];
  for (const ref of refs) {
    const previous = previousOf(ref);
    if (previous === undefined) added.push(ref);
    if (!takenOver(ref)) continue;
    const restored = await query(containerTagLaunch(cli, previous!, ref));
    if (!restored.ok) {
      throw new ContainerError(
        `loading ${tar} took the name ${ref} from your image ${previous!.slice(0, 12)}, and ` +
          `${cli.program} could not give it back (${saidBy(restored.stderr)}): run ` +
          `\`${cli.program} tag ${previous!.slice(0, 12)} ${ref}\`.`,
      );
    }
    opts.note?.(
      `${ref} stays your image ${previous!.slice(0, 12)}` +
        (ref === first ? `; the loaded one runs as ${own}` : ""),
    );
  }
  const isNew = !before.has(id);
  // At the end: Deft's own name, and the names the load added to an image new to the runtime
  // (with its last name the image goes); an image the runtime held keeps its names.
  return {
    ref: own ?? first,
    isNew,
    cleanup: [...(own ? [own] : []), ...(isNew ? added : [])],
  };
}

/** An image Deft built or loaded once for many containers (a batch's default image). */
export interface MadeImage {
  cli: ContainerCli;
  /** The image's name, as the runtime takes it. */
  ref: string;
  /** `remove` takes it away: it was built, or loaded new, and is not kept. */
  owned: boolean;
  /** Removes the image when owned; errors are thrown; safe to call twice. */
  remove(): Promise<void>;
}

/**
 * `--dockerfile-path` or `--docker-image-file` once, for many containers: builds (labelled like
 * `deft run`'s builds, so a killed Deft's image is swept by the next start) or loads the image.
 * With `keep`, or for a loaded image the runtime held before, `remove` leaves it.
 */
export async function makeImage(opts: ContainerOptions): Promise<MadeImage> {
  checkContainerOptions(opts);
  if (!opts.dockerfile && !opts.imageFile) {
    throw new ContainerError("an image is made from --dockerfile-path or --docker-image-file.");
  }
  const cli = await chooseRuntime(opts.runtime, opts.podmanRuntime);
  await sweepImages(cli);
  const made = opts.dockerfile ? await built(cli, opts) : await loadImage(cli, opts);
  let removed = false;
  return {
    cli,
    ref: made.ref,
    owned: made.isNew && !opts.keep,
    remove: async () => {
      if (opts.keep || removed) return;
      removed = true;
      const error = await dropMade(cli, made);
      if (error) throw new ContainerError(error);
    },
  };
}

/** `--dockerfile-path`'s image, as made. */
export async function built(cli: ContainerCli, opts: ContainerOptions): Promise<Made> {
  const tag = await buildImage(cli, opts);
  return { ref: tag, isNew: true, cleanup: [tag] };
}

/**
 * Removes the names Deft gave or the load added (the image goes with its last name); the user's
 * own names stay. An error is returned, not thrown.
 */
export async function dropMade(cli: ContainerCli, made: Made): Promise<string | undefined> {
  const answer = await query(containerImageRemoveLaunch(cli, made.cleanup));
  if (answer.ok || /no such image|image not known/i.test(answer.stderr)) return undefined;
  return `the image ${made.ref} could not be removed: ${saidBy(answer.stderr)}`;
}

/** The image's WORKDIR, or a ContainerError saying the image is not there and how to look. */
export async function imageWorkdir(cli: ContainerCli, image: string): Promise<string | undefined> {
  const answer = await query(containerImageLaunch(cli, image));
  if (!answer.ok) {
    const said = answer.stderr.split("\n").at(-1) ?? "";
    throw new ContainerError(
      `the image '${image}' is not in ${cli.program}'s images${said ? ` (${said})` : ""}. ` +
        `List them with \`${cli.program} images\`; Deft never pulls: \`${cli.program} pull ` +
        `${image}\` or build it first.`,
    );
  }
  try {
    const [info] = JSON.parse(answer.stdout) as { Config?: { WorkingDir?: string } }[];
    return info?.Config?.WorkingDir || undefined;
  } catch {
    return undefined;
  }
}
