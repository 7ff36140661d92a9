/**
 * Deft's tools inside a Docker or Podman container. This module chooses the runtime, starts a
 * container from an image (or attaches to a running one), checks that Deft can run in it, and
 * removes what it started. Every argv comes from the process policy's container views
 * (src/policy/process.ts); nothing here builds a command line or quotes anything.
 *
 * A container Deft starts lives only as long as Deft: its one process reads a pipe whose other
 * end Deft holds, so when Deft exits or is killed (even SIGKILL) the process ends and `--rm`
 * removes the container. Each carries Deft's labels and a proof that this install made it
 * (ownership.ts), and the next start removes a proven leftover whose run is over (a daemon that
 * was down when Deft died). `--docker-keep` keeps the
 * container; one named by `--docker-container-id` is never removed.
 */
import { dirname, resolve } from "node:path";
import { UsageError } from "../errors.ts";
import {
  checkContainerWord,
  type ContainerBind,
  containerBuildLaunch,
  type ContainerCli,
  containerExecLaunch,
  containerImageLaunch,
  containerImageRemoveLaunch,
  containerImagesLaunch,
  containerImageTagsLaunch,
  containerInspectLaunch,
  containerLaunch,
  containerListLaunch,
  containerLoadLaunch,
  containerProbeLaunch,
  containerRemoveLaunch,
  containerSeccompProfile,
  containerTagLaunch,
  runChild,
  SECCOMP_BASE_PROFILES,
  spawnChild,
} from "../policy/process.ts";
import { type DeftInside, deftInside, INSIDE_TEMP, prepareDeftInside } from "./inside.ts";
import { provenLeftover, pruneRuns, stampLabels } from "./ownership.ts";

/** The runtimes Deft drives. */
export const CONTAINER_RUNTIMES = ["docker", "podman"] as const;
export type ContainerRuntime = (typeof CONTAINER_RUNTIMES)[number];

/** The label every container Deft starts carries. */
export const DEFT_LABEL = "deft.container";
const KEEP_LABEL = "deft.keep";
/**
 * The labels of an image Deft builds. Not the containers' own: a container inherits its image's
 * labels, and one started from a kept image must not count as kept, or as another Deft's.
 */
const IMAGE_LABEL = "deft.image";
const IMAGE_KEEP_LABEL = "deft.image.keep";

/** How long a runtime client may take to answer a question. */
const QUERY_TIMEOUT_MS = 30_000;
/** How long a new container may take to be running. */
const START_TIMEOUT_MS = 60_000;
/** How long `--dockerfile-path`'s build and `--docker-image-file`'s load may take. */
const BUILD_TIMEOUT_MS = 30 * 60_000;

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

/** What the user asked for. */
export interface ContainerOptions {
  /** `--container-runtime`; unset: docker when its daemon answers, else podman. */
  runtime?: ContainerRuntime;
  /** `--docker-image`: start a container from it. */
  image?: string;
  /** `--docker-container-id`: use this running container; it is never removed. */
  containerId?: string;
  /** `--dockerfile-path`: build an image from this Dockerfile (its folder is the context). */
  dockerfile?: string;
  /** `--docker-image-file`: load the image from this archive (`docker save`). */
  imageFile?: string;
  /** `--docker-keep`: leave the started container behind. */
  keep?: boolean;
  /** `-w` as given: a folder inside, or a host folder bound at the same path. */
  workingDir?: string;
  /** The container may use the host's network. */
  network?: boolean;
  memory?: string;
  pidsLimit?: number;
  /** Podman's OCI runtime (default runc when installed). */
  podmanRuntime?: string;
  /** Told what takes a while (a build, a load) before it starts. */
  note?: (text: string) => void;
  /** More labels for a container Deft starts (a batch's own); Deft's labels win. */
  labels?: Record<string, string>;
}

/** A container Deft's tools run in. */
export interface Container {
  cli: ContainerCli;
  /** The container's name or id, as the runtime takes it. */
  id: string;
  image?: string;
  /** The image Deft built or loaded for it, removed with it unless kept. */
  madeImage?: { ref: string; removed: boolean };
  /** The workspace inside, an absolute path. */
  workspace: string;
  /** Deft started it (else it was named with --docker-container-id). */
  started: boolean;
  kept: boolean;
  /** How Deft's tool host starts inside. */
  inside: DeftInside;
  /** Removes the container unless it is kept or was not Deft's; safe to call twice. */
  close(): Promise<void>;
}

/** Throws a ContainerError unless `opts` name exactly one way to get a container. */
export function checkContainerOptions(opts: ContainerOptions): void {
  const sources = [
    ["--docker-image", opts.image],
    ["--docker-container-id", opts.containerId],
    ["--dockerfile-path", opts.dockerfile],
    ["--docker-image-file", opts.imageFile],
  ].filter(([, given]) => given !== undefined).map(([flag]) => flag);
  if (sources.length > 1) {
    throw new ContainerError(
      `${sources.join(" and ")} cannot go together: give one of --docker-image (start a new ` +
        "container from an image), --dockerfile-path (build one, then start it), " +
        "--docker-image-file (load one, then start it) or --docker-container-id (use a running " +
        "container).",
    );
  }
  for (
    const [flag, given] of [["--dockerfile-path", opts.dockerfile], [
      "--docker-image-file",
      opts.imageFile,
    ]] as const
  ) {
    if (given === "") throw new ContainerError(`${flag} needs a file name.`);
  }
  if (opts.keep && opts.containerId) {
    throw new ContainerError(
      "--docker-keep keeps a container Deft starts; one named by --docker-container-id is " +
        "never removed anyway. Drop --docker-keep.",
    );
  }
  if (opts.runtime && !CONTAINER_RUNTIMES.includes(opts.runtime)) {
    throw new ContainerError(
      `--container-runtime must be docker or podman, not '${opts.runtime}'.`,
    );
  }
  for (
    const [what, word] of [["--docker-image", opts.image], [
      "--docker-container-id",
      opts.containerId,
    ]] as const
  ) {
    if (word === undefined) continue;
    try {
      checkContainerWord(what, word);
    } catch (e) {
      throw new ContainerError((e as Error).message);
    }
  }
}

/** Runs one runtime client command to its end (bounded), with its output as text. */
async function query(
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
  }
  throw new ContainerRuntimeUnavailableError(
    `no container runtime is usable (${tried.join("; ")}). ` +
      (requested === "docker" || !requested
        ? "Start the Docker daemon (or point DOCKER_HOST at one), "
        : "") +
      "install Podman (apt-get install podman runc), or choose one with --container-runtime.",
  );
}

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

/** The runtime's words on a failure, minus the banners it prints every time. */
function saidBy(stderr: string, lines = 4): string {
  return stderr.split("\n").map((l) => l.trim())
    .filter((l) =>
      l &&
      !/DEPRECATED|buildx|BuildKit|docs\.docker\.com\/go|^Sending build context|^Step \d/.test(l)
    )
    .slice(-lines).join(" ");
}

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
interface Made {
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
async function loadImage(cli: ContainerCli, opts: ContainerOptions): Promise<Made> {
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
  // Deft's own name first (the image must keep one while the user's names go back).
  const own = `${containerName().replace(/^deft-/, "deft-loaded-")}:latest`;
  const tagged = await query(containerTagLaunch(cli, id, own));
  if (!tagged.ok) {
    throw new ContainerError(
      `${cli.program} could not name the image loaded from ${tar}: ${saidBy(tagged.stderr)}`,
    );
  }
  // Every name the load moved off a user's image goes back to it.
  const added: string[] = [];
  for (const ref of refs) {
    if (digest.test(ref)) continue;
    const tag = ref.replace(/^localhost\//, "");
    const previous = tagsBefore.get(tag) ?? tagsBefore.get(`${tag}:latest`);
    const now = loadedIds.get(ref);
    if (previous === undefined) {
      added.push(ref);
      continue;
    }
    if (now === undefined || previous === now) continue;
    const restored = await query(containerTagLaunch(cli, previous, ref));
    if (!restored.ok) {
      throw new ContainerError(
        `loading ${tar} took the name ${ref} from your image ${previous.slice(0, 12)}, and ` +
          `${cli.program} could not give it back (${saidBy(restored.stderr)}): run ` +
          `\`${cli.program} tag ${previous.slice(0, 12)} ${ref}\`.`,
      );
    }
    opts.note?.(`${ref} stays your image ${previous.slice(0, 12)}; the loaded one runs as ${own}`);
  }
  return { ref: own, isNew: !before.has(id), cleanup: [own, ...added] };
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
async function built(cli: ContainerCli, opts: ContainerOptions): Promise<Made> {
  const tag = await buildImage(cli, opts);
  return { ref: tag, isNew: true, cleanup: [tag] };
}

/**
 * Removes the names Deft gave or the load added (the image goes with its last name); the user's
 * own names stay. An error is returned, not thrown.
 */
async function dropMade(cli: ContainerCli, made: Made): Promise<string | undefined> {
  const answer = await query(containerImageRemoveLaunch(cli, made.cleanup));
  if (answer.ok || /no such image|image not known/i.test(answer.stderr)) return undefined;
  return `the image ${made.ref} could not be removed: ${saidBy(answer.stderr)}`;
}

/** The image's WORKDIR, or a ContainerError saying the image is not there and how to look. */
async function imageWorkdir(cli: ContainerCli, image: string): Promise<string | undefined> {
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

/** A fresh name for a container Deft starts. */
function containerName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `deft-${Deno.pid}-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The workspace: `-w` naming an existing host folder is bound at the same path (read-write);
 * any other `-w` is a folder inside; no `-w`: the image's WORKDIR (else /).
 */
function workspacePlan(
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

/**
 * For a container with a host folder bound in: the runtime's default seccomp profile, changed so
 * that nothing inside can give a file a setuid or setgid bit (`containerSeccompProfile`), written
 * to a private file for the runtime's client to read. Returns the file; the caller removes it.
 */
async function setIdGuard(workingDir: string): Promise<string> {
  let base: unknown;
  for (const path of SECCOMP_BASE_PROFILES) {
    try {
      base = JSON.parse(await Deno.readTextFile(path));
      break;
    } catch {
      // Not here (or unreadable): the next.
    }
  }
  let profile: Record<string, unknown>;
  try {
    profile = containerSeccompProfile(base);
  } catch {
    throw new ContainerError(
      `-w ${workingDir} binds a host folder, and Deft binds one only with a seccomp profile that ` +
        "stops the container making setuid programs there (root inside owns the files it " +
        `writes); it builds on the runtimes' default profile, not found (${
          SECCOMP_BASE_PROFILES.join(", ")
        }). Install containers-common (Debian: golang-github-containers-common), or name a ` +
        "folder inside the image with -w.",
    );
  }
  const file = await Deno.makeTempFile({ prefix: "deft-seccomp-", suffix: ".json" });
  await Deno.chmod(file, 0o600);
  await Deno.writeTextFile(file, JSON.stringify(profile));
  return file;
}

/** Waits until the container `id` runs; a ContainerError with the runtime's words if it ended. */
async function waitRunning(
  cli: ContainerCli,
  id: string,
  child: Deno.ChildProcess,
  detached: boolean,
  stderr: () => string,
): Promise<string> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited: Deno.CommandStatus | undefined;
  child.status.then((s) => exited = s);
  while (Date.now() < deadline) {
    const answer = await query(containerInspectLaunch(cli, [id]));
    if (answer.ok) {
      try {
        const [info] = JSON.parse(answer.stdout) as { Id: string; State?: { Running?: boolean } }[];
        if (info?.State?.Running) return info.Id;
      } catch {
        // Not JSON yet; ask again.
      }
    }
    // A detached run's client ends as soon as the container is created; an attached one's ends
    // with the container.
    if (exited && (!detached || !exited.success)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const said = stderr().trim().split("\n").slice(-3).join(" ");
  throw new ContainerError(
    `the container could not be started by ${cli.program}${said ? `: ${said}` : ""}`,
  );
}

/** Runs a short command inside; its exit code and output. */
async function execIn(
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
 * Checks that Deft can run inside (its Deno needs glibc's loader) and that the workspace is a
 * folder there, and makes Deft's private folder.
 */
async function prepareInside(
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

/**
 * Ends every process in the container `id` but its first (the keeper), as root inside: a signal
 * to -1 reaches all of them but the caller and the namespace's init. Twice, for one that forked
 * while the first went round. The container's files stay as the session left them.
 */
async function endSessionProcesses(cli: ContainerCli, id: string): Promise<void> {
  for (let round = 0; round < 2; round++) {
    await execIn(cli, id, ["sh", "-c", "kill -KILL -1 2>/dev/null; true"]);
  }
}

/** Removes `id`, at once; errors are returned, not thrown (a cleanup must not hide the run's end). */
async function remove(cli: ContainerCli, id: string): Promise<string | undefined> {
  const answer = await query(containerRemoveLaunch(cli, [id]));
  if (answer.ok || /no such container|no container with name or id/i.test(answer.stderr)) {
    return undefined;
  }
  return `the container ${id} could not be removed: ${answer.stderr}`;
}

/**
 * Starts (or attaches to) the container for a session's tools, and checks Deft can run in it.
 * `entry` is the module the tool worker runs; `hostCommand` the argument that makes Deft serve
 * as the tool host. Throws ContainerError with what went wrong and what to do.
 */
export async function openContainer(
  opts: ContainerOptions,
  entry: string,
  hostCommand: string,
): Promise<Container> {
  checkContainerOptions(opts);
  const cli = await chooseRuntime(opts.runtime, opts.podmanRuntime);
  const inside = deftInside(entry, hostCommand);
  if (opts.containerId) {
    const id = opts.containerId;
    const answer = await query(containerInspectLaunch(cli, [id]));
    let info: {
      Id?: string;
      State?: { Running?: boolean };
      Config?: { WorkingDir?: string; Image?: string };
    } = {};
    try {
      [info] = JSON.parse(answer.stdout);
    } catch {
      // Reported below.
    }
    if (!answer.ok || !info?.Id) {
      throw new ContainerError(
        `there is no container '${id}' in ${cli.program} (list them with \`${cli.program} ps\`).`,
      );
    }
    if (!info.State?.Running) {
      throw new ContainerError(
        `the container '${id}' is not running: start it with \`${cli.program} start ${id}\`.`,
      );
    }
    const { workspace } = workspacePlan(opts.workingDir, info.Config?.WorkingDir, true);
    // A running container cannot be given binds: Deft's runtime must already be inside it.
    await prepareInside(cli, id, undefined, inside, workspace);
    return {
      cli,
      id,
      // What it was started from (resuming finds the sessions of that image by it).
      image: info.Config?.Image || undefined,
      workspace,
      started: false,
      kept: true,
      inside,
      close: () => Promise.resolve(),
    };
  }
  if (!opts.image && !opts.dockerfile && !opts.imageFile) {
    throw new ContainerError(
      "a container needs --docker-image, --dockerfile-path, --docker-image-file or " +
        "--docker-container-id.",
    );
  }
  await Promise.all([sweepLeftovers(cli), sweepImages(cli)]);
  await prepareDeftInside(inside);
  // An image Deft builds or loads new goes with the container, unless kept.
  let made: Made | undefined;
  if (opts.dockerfile) made = await built(cli, opts);
  else if (opts.imageFile) made = await loadImage(cli, opts);
  const image = made?.ref ?? opts.image!;
  const kept = made && { ref: made.ref, removed: !opts.keep };
  const dropImage = async (): Promise<string | undefined> => {
    if (!made) return undefined;
    const dropping = made;
    made = undefined;
    return await dropMade(cli, dropping);
  };
  let workdir: string | undefined;
  let plan: ReturnType<typeof workspacePlan>;
  try {
    workdir = await imageWorkdir(cli, image);
    plan = workspacePlan(opts.workingDir, workdir, false);
  } catch (e) {
    await dropImage();
    throw e;
  }
  const name = containerName();
  const labels: Record<string, string> = {
    ...opts.labels,
    [DEFT_LABEL]: "1",
    ...await stampLabels("container", name),
  };
  if (opts.keep) labels[KEEP_LABEL] = "1";
  let launch;
  let seccomp: string | undefined;
  try {
    if (plan.bind) seccomp = await setIdGuard(opts.workingDir!);
    launch = containerLaunch(cli, {
      seccompProfile: seccomp,
      image,
      name,
      labels,
      network: opts.network ? "host" : "none",
      memory: opts.memory,
      pidsLimit: opts.pidsLimit,
      binds: [...inside.binds, ...(plan.bind ? [plan.bind] : [])],
      keep: opts.keep ?? false,
    });
  } catch (e) {
    await dropImage();
    if (seccomp) await Deno.remove(seccomp).catch(() => {});
    throw e instanceof ContainerError ? e : new ContainerError((e as Error).message);
  }
  // Its own session: a Ctrl-C at the terminal must not reach the client (it would end the
  // container before Deft has closed its tools).
  const child = spawnChild(launch, {
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
    detached: true,
  });
  let stderr = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr = (stderr + decoder.decode(chunk)).slice(-4096);
  })().catch(() => {});
  // Deft's end of the container's lifeline; never written, closed when Deft ends.
  const lifeline = child.stdin.getWriter();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (opts.keep) {
      lifeline.releaseLock();
      child.unref();
      // Nothing of the session lives on in the kept container: every process but its keeper
      // (`cat`, its first) ends, those the model detached from its shell (`setsid`) too.
      await endSessionProcesses(cli, name);
      return;
    }
    const error = await remove(cli, name);
    await lifeline.close().catch(() => {});
    await child.status.catch(() => {});
    // The container is gone, so its image can go.
    const imageError = await dropImage();
    if (error || imageError) {
      throw new ContainerError([error, imageError].filter(Boolean).join("; "));
    }
  };
  let id: string;
  try {
    id = await waitRunning(cli, name, child, opts.keep ?? false, () => stderr);
    await prepareInside(cli, name, image, inside, plan.workspace);
  } catch (e) {
    if (seccomp) await Deno.remove(seccomp).catch(() => {});
    if (opts.keep) {
      closed = true;
      lifeline.releaseLock();
      child.unref();
      await remove(cli, name);
      // A failed start keeps nothing, not even an image built or loaded for it.
      await dropImage();
    } else {
      await close().catch(() => {});
    }
    throw e;
  }
  // The client has read the profile: the container runs.
  if (seccomp) await Deno.remove(seccomp).catch(() => {});
  // Deft's exit must not wait for the client: it ends with the container, or (kept) at once.
  child.unref();
  return {
    cli,
    id,
    image,
    madeImage: kept,
    workspace: plan.workspace,
    started: true,
    kept: opts.keep ?? false,
    inside,
    close,
  };
}
