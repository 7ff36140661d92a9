/**
 * Deft's tools inside a Docker or Podman container. This module chooses the runtime, starts a
 * container from an image (or attaches to a running one), checks that Deft can run in it, and
 * removes what it started. Every argv comes from the process policy's container views
 * (src/policy/process.ts); nothing here builds a command line or quotes anything.
 *
 * A container Deft starts lives only as long as Deft: its one process reads a pipe whose other
 * end Deft holds, so when Deft exits or is killed (even SIGKILL) the process ends and `--rm`
 * removes the container. Each carries Deft's labels, and the next start removes any labelled
 * leftover whose Deft is gone (a daemon that was down when Deft died). `--docker-keep` keeps the
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
  containerInspectLaunch,
  containerLaunch,
  containerListLaunch,
  containerLoadLaunch,
  containerProbeLaunch,
  containerRemoveLaunch,
  helperLaunch,
  runChild,
  spawnChild,
} from "../policy/process.ts";
import { type DeftInside, deftInside, INSIDE_TEMP, prepareDeftInside } from "./inside.ts";

/** The runtimes Deft drives. */
export const CONTAINER_RUNTIMES = ["docker", "podman"] as const;
export type ContainerRuntime = (typeof CONTAINER_RUNTIMES)[number];

/** The label every container Deft starts carries. */
export const DEFT_LABEL = "deft.container";
const OWNER_LABEL = "deft.owner";
const KEEP_LABEL = "deft.keep";
/**
 * The labels of an image Deft builds. Not the containers' own: a container inherits its image's
 * labels, and one started from a kept image must not count as kept, or as another Deft's.
 */
const IMAGE_LABEL = "deft.image";
const IMAGE_OWNER_LABEL = "deft.image.owner";
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

/**
 * This process, as its containers' owner label names it: host, pid and start time. The start
 * time comes from `ps` (Deno lets only a process with every permission read /proc/PID/stat); a
 * pid reused later, or after a reboot, has another.
 */
async function ownerTag(): Promise<string | undefined> {
  const start = await processStart(Deno.pid);
  const host = hostName();
  return start === undefined || host === undefined ? undefined : `${host}/${Deno.pid}/${start}`;
}

function hostName(): string | undefined {
  try {
    return Deno.hostname();
  } catch {
    return undefined;
  }
}

/** When `pid` started, as `ps` tells it; undefined when there is no such process (or no ps). */
async function processStart(pid: number): Promise<string | undefined> {
  try {
    const out = await runChild(helperLaunch("ps", ["-o", "lstart=", "-p", String(pid)]), {
      signal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
    });
    const said = new TextDecoder().decode(out.stdout).trim();
    return out.success && said ? said : undefined;
  } catch {
    return undefined;
  }
}

/** True when the Deft that `owner` names has ended (a tag of another machine: false). */
async function ownerGone(owner: string): Promise<boolean> {
  const [host, pid, start] = owner.split("/");
  if (host !== hostName() || !/^[0-9]+$/.test(pid ?? "") || !start) return false;
  return await processStart(Number(pid)) !== start;
}

/**
 * Removes the containers a Deft on this machine started and did not live to remove (killed
 * while the daemon was down, say): labelled, not kept, their owner gone. Returns their ids.
 */
export async function sweepLeftovers(cli: ContainerCli): Promise<string[]> {
  const listed = await query(containerListLaunch(cli, `${DEFT_LABEL}=1`));
  if (!listed.ok) return [];
  const ids = listed.stdout.split("\n").map((s) => s.trim()).filter(Boolean);
  if (ids.length === 0) return [];
  const inspected = await query(containerInspectLaunch(cli, ids));
  let details: { Id: string; Config?: { Labels?: Record<string, string> | null } }[] = [];
  try {
    details = JSON.parse(inspected.stdout);
  } catch {
    return [];
  }
  const gone: string[] = [];
  for (const c of details) {
    const labels = c.Config?.Labels ?? {};
    if (labels[KEEP_LABEL] === "1" || labels[OWNER_LABEL] === undefined) continue;
    if (await ownerGone(labels[OWNER_LABEL])) gone.push(c.Id);
  }
  if (gone.length > 0) await query(containerRemoveLaunch(cli, gone));
  return gone;
}

/**
 * Removes the images a Deft on this machine built and did not live to remove: labelled, not
 * kept, their owner gone. Returns their ids. An image a container still uses stays.
 */
export async function sweepImages(cli: ContainerCli): Promise<string[]> {
  const listed = await query(containerImagesLaunch(cli, `${IMAGE_LABEL}=1`));
  if (!listed.ok) return [];
  const ids = [...new Set(listed.stdout.split("\n").map((s) => s.trim()).filter(Boolean))];
  const gone: string[] = [];
  for (const id of ids) {
    const inspected = await query(containerImageLaunch(cli, id));
    let labels: Record<string, string> = {};
    try {
      const [info] = JSON.parse(inspected.stdout) as {
        Labels?: Record<string, string> | null;
        Config?: { Labels?: Record<string, string> | null };
      }[];
      labels = info?.Config?.Labels ?? info?.Labels ?? {};
    } catch {
      continue;
    }
    const owner = labels[IMAGE_OWNER_LABEL];
    if (labels[IMAGE_KEEP_LABEL] === "1" || owner === undefined) continue;
    if (await ownerGone(owner)) gone.push(id);
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
async function buildImage(
  cli: ContainerCli,
  opts: ContainerOptions,
  owner: string | undefined,
): Promise<string> {
  const dockerfile = givenFile(
    "--dockerfile-path",
    opts.dockerfile!,
    "the Dockerfile to build (its folder is the build context)",
  );
  const context = dirname(dockerfile);
  const tag = `${containerName().replace(/^deft-/, "deft-built-")}:latest`;
  const labels: Record<string, string> = { [IMAGE_LABEL]: "1" };
  if (owner) labels[IMAGE_OWNER_LABEL] = owner;
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

/**
 * `--docker-image-file`: loads the archive's images and returns the first one's name, with
 * whether it is new to the runtime (then it goes when the run ends; one the runtime held before
 * stays).
 */
async function loadImage(
  cli: ContainerCli,
  opts: ContainerOptions,
): Promise<{ ref: string; isNew: boolean }> {
  const what = "an image archive written by `docker save` or `podman save`";
  const tar = givenFile("--docker-image-file", opts.imageFile!, what);
  const before = await imageIds(cli);
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
  const ref = refs[0];
  try {
    checkContainerWord("image", ref);
  } catch (e) {
    throw new ContainerError(`${tar} holds an image named oddly: ${(e as Error).message}`);
  }
  if (refs.length > 1) opts.note?.(`${tar} holds ${refs.length} images; using ${ref}`);
  const id = await imageId(cli, ref);
  return { ref, isNew: id !== undefined && !before.has(id) };
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
  const made = opts.dockerfile
    ? { ref: await buildImage(cli, opts, await ownerTag()), isNew: true }
    : await loadImage(cli, opts);
  const owned = made.isNew && !opts.keep;
  let removed = false;
  return {
    cli,
    ref: made.ref,
    owned,
    remove: async () => {
      if (!owned || removed) return;
      removed = true;
      const answer = await query(containerImageRemoveLaunch(cli, [made.ref]));
      if (!answer.ok) {
        throw new ContainerError(
          `the image ${made.ref} could not be removed: ${saidBy(answer.stderr)}`,
        );
      }
    },
  };
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
  const owner = await ownerTag();
  // An image Deft builds or loads new goes with the container, unless kept.
  let made: { ref: string; isNew: boolean } | undefined;
  if (opts.dockerfile) made = { ref: await buildImage(cli, opts, owner), isNew: true };
  else if (opts.imageFile) made = await loadImage(cli, opts);
  const image = made?.ref ?? opts.image!;
  const dropImage = async (): Promise<string | undefined> => {
    if (!made?.isNew) return undefined;
    const answer = await query(containerImageRemoveLaunch(cli, [made.ref]));
    made = undefined;
    return answer.ok
      ? undefined
      : `the image ${image} could not be removed: ${saidBy(answer.stderr)}`;
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
  const labels: Record<string, string> = { ...opts.labels, [DEFT_LABEL]: "1" };
  if (owner) labels[OWNER_LABEL] = owner;
  if (opts.keep) labels[KEEP_LABEL] = "1";
  const name = containerName();
  let launch;
  try {
    launch = containerLaunch(cli, {
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
    throw new ContainerError((e as Error).message);
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
    await close().catch(() => {});
    if (opts.keep) {
      await remove(cli, name);
      // A failed start keeps nothing, not even an image built or loaded for it.
      await dropImage();
    }
    throw e;
  }
  // Deft's exit must not wait for the client: it ends with the container, or (kept) at once.
  child.unref();
  return {
    cli,
    id,
    image,
    madeImage: made && { ref: made.ref, removed: made.isNew && !opts.keep },
    workspace: plan.workspace,
    started: true,
    kept: opts.keep ?? false,
    inside,
    close,
  };
}
