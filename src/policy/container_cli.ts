/**
 * The container views of the process policy: every command line Deft gives a container runtime's
 * client (docker, podman), argv only, with only the variables that find its daemon, and what a
 * container Deft starts may do (no network unless allowed, limits, no new privileges, no device
 * nodes, no set-id files in a bound host folder). Words the user wrote (an image, a container id)
 * are checked to be plain names before they reach an argv.
 */
import { readEnv } from "../env.ts";
import { deftCacheDir } from "./dirs.ts";
import { type Launch, probeLaunch, runChildSync } from "./spawn.ts";
import { shellEnvironment } from "./shell_env.ts";

/**
 * A container runtime's client: `docker`, or `podman` with the OCI runtime and rlimits it needs
 * on this kind of machine (crun cannot run on a cgroups-v1 hybrid layout; podman's default rlimits
 * are above the hard ones and fail).
 */
export interface ContainerCli {
  program: "docker" | "podman";
  /** Podman's OCI runtime (`--runtime`), e.g. `runc`. */
  ociRuntime?: string;
}

/** A host folder shown inside a container. */
export interface ContainerBind {
  host: string;
  container: string;
  readOnly: boolean;
}

/** Everything a container Deft starts is started with. */
export interface ContainerSpec {
  image: string;
  /** The container's name (Deft chooses it, so it is known before the runtime answers). */
  name: string;
  labels: Record<string, string>;
  /** The runtime's network; `none` unless the config allows the network. */
  network: "none" | "host";
  /** `--memory`, e.g. `4g`. */
  memory?: string;
  /** `--pids-limit`. */
  pidsLimit?: number;
  binds: readonly ContainerBind[];
  /**
   * A seccomp profile file (`containerSeccompProfile`'s JSON) replacing the runtime's default:
   * given when a host folder is bound, so nothing inside can make a setuid or setgid file there.
   */
  seccompProfile?: string;
  /**
   * Kept containers run detached. The others are attached to Deft by their standard input: the
   * container's only process reads it and ends when Deft's end of the pipe closes (Deft exits,
   * or is killed), and `--rm` then removes the container.
   */
  keep: boolean;
}

/** What runs inside a container with `exec`. */
export interface ContainerExec {
  argv: readonly string[];
  /** Variables set inside (on top of the image's own); nothing of Deft's is passed. */
  env?: Record<string, string>;
  workdir?: string;
  /** Keep standard input open (the tool host's message stream). */
  interactive?: boolean;
}

/**
 * The variables a runtime client needs to find its daemon or storage, and nothing else: the
 * container never sees them (`exec` passes only what `-e` names).
 */
const CONTAINER_CLI_VARIABLES = [
  "PATH",
  "HOME",
  "DOCKER_HOST",
  "DOCKER_CONTEXT",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
  "CONTAINER_HOST",
  "CONTAINERS_CONF",
  "CONTAINERS_STORAGE_CONF",
  "XDG_RUNTIME_DIR",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "TMPDIR",
];

/**
 * One word the runtime reads as a name, not an option: an image reference or a container id as
 * the user wrote it. A leading dash or a space would make the client read something else.
 */
const CONTAINER_WORD = /^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$/;

/** Throws unless `word` is a plain image reference, container id or name. */
export function checkContainerWord(what: string, word: string): void {
  if (!CONTAINER_WORD.test(word) || word.length > 512) {
    throw new Error(
      `${what} '${word}' is not a plain name: it must start with a letter or digit and hold ` +
        "only letters, digits and . _ / : @ + -",
    );
  }
}

/**
 * The docker client's configuration folder Deft gives it: not the user's. The user's
 * `config.json` can hold `proxies`, which the client copies into every container it starts (and
 * every build) as variables the model would read, and credentials Deft never needs (it never
 * pulls). Deft's own folder keeps only the choice of daemon (`currentContext`, with the user's
 * `contexts` and `cli-plugins` folders linked in). Made once per process; undefined when it
 * cannot be written (the client then runs with an empty, missing folder of Deft's).
 */
let clientConfig: string | undefined;

/** The user's docker configuration folder: `$DOCKER_CONFIG`, else `~/.docker`. */
function userDockerConfig(): string | undefined {
  const explicit = readEnv("DOCKER_CONFIG");
  if (explicit) return explicit;
  const home = readEnv("HOME");
  return home ? `${home}/.docker` : undefined;
}

/** What of the user's docker `config.json` Deft keeps: the daemon it chose, nothing else. */
export function dockerClientConfig(user: unknown): Record<string, string> {
  const context = (user as { currentContext?: unknown } | null)?.currentContext;
  return typeof context === "string" && /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(context)
    ? { currentContext: context }
    : {};
}

/** Deft's docker configuration folder (see `clientConfig`), made on first use. */
export function dockerClientConfigDir(): string {
  if (clientConfig) return clientConfig;
  const dir = `${deftCacheDir()}/docker-config-${Deno.uid() ?? "user"}`;
  const user = userDockerConfig();
  let kept: Record<string, string> = {};
  if (user) {
    try {
      kept = dockerClientConfig(JSON.parse(Deno.readTextFileSync(`${user}/config.json`)));
    } catch {
      // No config, or not JSON: the client's defaults.
    }
  }
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    Deno.chmodSync(dir, 0o700);
    for (const sub of ["contexts", "cli-plugins"]) {
      const link = `${dir}/${sub}`;
      try {
        Deno.removeSync(link);
      } catch {
        // Not there yet.
      }
      if (user) {
        try {
          Deno.symlinkSync(`${user}/${sub}`, link);
        } catch {
          // Another Deft made it just now; it points at the same folder.
        }
      }
    }
    // Written whole under a private name, then renamed: another Deft may read it meanwhile.
    const tmp = `${dir}/config.json.${Deno.pid}`;
    Deno.writeTextFileSync(tmp, JSON.stringify(kept) + "\n", { mode: 0o600 });
    Deno.renameSync(tmp, `${dir}/config.json`);
  } catch {
    // Unwritable cache: the client gets the folder anyway (missing means no configuration).
  }
  clientConfig = dir;
  return dir;
}

/** The runtime client with `args`, its daemon's variables only. */
function containerCli(cli: ContainerCli, args: readonly string[]): Launch {
  const global = cli.program === "podman" && cli.ociRuntime ? ["--runtime", cli.ociRuntime] : [];
  return {
    program: cli.program,
    args: [...global, ...args],
    env: {
      ...shellEnvironment({ include_only: CONTAINER_CLI_VARIABLES }),
      // Never the user's configuration (its proxies would reach the container): Deft's own.
      ...(cli.program === "docker" ? { DOCKER_CONFIG: dockerClientConfigDir() } : {}),
      // No colours or progress bars in what Deft parses.
      NO_COLOR: "1",
    },
  };
}

/** Asks the runtime whether it works: the daemon's version (docker), the engine's (podman). */
export function containerProbeLaunch(cli: ContainerCli): Launch {
  return containerCli(cli, ["version", "--format", "{{.Server.Version}}"]);
}

/** `image inspect IMAGE`: JSON, with the image's WORKDIR, or an error when it is missing. */
export function containerImageLaunch(cli: ContainerCli, image: string): Launch {
  checkContainerWord("image", image);
  return containerCli(cli, ["image", "inspect", "--", image]);
}

/** `inspect ID…`: JSON of each container (state, labels). */
export function containerInspectLaunch(cli: ContainerCli, ids: readonly string[]): Launch {
  for (const id of ids) checkContainerWord("container", id);
  return containerCli(cli, ["container", "inspect", "--", ...ids]);
}

/** The ids of every container, running or not, that carries `label` (a `KEY=VALUE`). */
export function containerListLaunch(cli: ContainerCli, label: string): Launch {
  return containerCli(cli, ["ps", "-a", "-q", "--no-trunc", "--filter", `label=${label}`]);
}

/** Removes containers at once, running or not. */
export function containerRemoveLaunch(cli: ContainerCli, ids: readonly string[]): Launch {
  for (const id of ids) checkContainerWord("container", id);
  const now = cli.program === "podman" ? ["-t", "0"] : [];
  return containerCli(cli, ["rm", "-f", ...now, "--", ...ids]);
}

/**
 * Starts a container for Deft's tools: no network (unless allowed), memory and process limits,
 * no variables of Deft's, only the given binds, every one Deft's label. Its one process is
 * `cat` reading standard input, which keeps it alive without doing anything (see `keep`).
 * Bind paths are written into the runtime's `-v` syntax, so a path with `:` or `,` is refused.
 */
export function containerLaunch(cli: ContainerCli, spec: ContainerSpec): Launch {
  checkContainerWord("image", spec.image);
  checkContainerWord("container name", spec.name);
  const args = ["run", ...(spec.keep ? ["-d", "-i"] : ["-i", "--rm"]), "--name", spec.name];
  for (const [key, value] of Object.entries(spec.labels)) {
    if (!/^[a-z0-9.-]+$/.test(key) || /[\n\r]/.test(value)) {
      throw new Error(`container label ${key} is not a plain label`);
    }
    args.push("--label", `${key}=${value}`);
  }
  args.push("--network", spec.network);
  args.push("--security-opt", "no-new-privileges");
  // No device nodes (a 0666 disk in a bound host folder) and no file capabilities (a program
  // that grants root on the host): nothing of Deft's tools needs either.
  args.push("--cap-drop", "MKNOD", "--cap-drop", "SETFCAP");
  if (spec.seccompProfile) {
    checkClientPath("seccomp profile", spec.seccompProfile);
    args.push("--security-opt", `seccomp=${spec.seccompProfile}`);
  }
  // Podman copies its own proxy variables in unless told not to (docker's come from its
  // configuration, which Deft replaces: `dockerClientConfigDir`).
  if (cli.program === "podman") args.push("--http-proxy=false");
  if (spec.memory) args.push("--memory", spec.memory);
  if (spec.pidsLimit) args.push("--pids-limit", String(spec.pidsLimit));
  if (cli.program === "podman") args.push(...podmanLimits(spec.pidsLimit ?? 4096));
  for (const bind of spec.binds) {
    for (const path of [bind.host, bind.container]) {
      if (!path.startsWith("/") || /[:,\n]/.test(path)) {
        throw new Error(
          `the path ${JSON.stringify(path)} cannot be bound into a container: it must be ` +
            "absolute and hold no ':' ',' or newline",
        );
      }
    }
    args.push("-v", `${bind.host}:${bind.container}:${bind.readOnly ? "ro" : "rw"}`);
  }
  args.push("--entrypoint", "cat", "--", spec.image);
  return containerCli(cli, args);
}

/** Where the container runtimes' own default seccomp profile lies (containers-common). */
export const SECCOMP_BASE_PROFILES = [
  "/etc/containers/seccomp.json",
  "/usr/share/containers/seccomp.json",
];

/** The mode bits that make a file run as its owner or group. */
const SET_ID_BITS = 0o6000;

/**
 * The calls that set a file's mode, with the index of their mode argument. Each is allowed only
 * with neither set-id bit in that mode: root inside a container is root on the host's files in a
 * bound folder, and a setuid-root program left there would give a host user root. (A `nosuid`
 * bind does not help: it stops running such a program through that mount, not making it.)
 */
const MODE_CALLS: [string, number][] = [
  ["chmod", 1],
  ["fchmod", 1],
  ["fchmodat", 2],
  ["fchmodat2", 2],
  ["creat", 1],
  ["open", 2],
  ["openat", 3],
  ["mknod", 1],
  ["mknodat", 2],
];

/**
 * Calls whose mode cannot be seen by a filter (openat2's is in a struct; io_uring does opens of
 * its own): answered "not implemented", so C libraries and runtimes fall back to the ones above.
 */
const UNFILTERABLE_CALLS = ["openat2", "io_uring_setup", "io_uring_enter", "io_uring_register"];

interface SeccompRule {
  names: string[];
  action: string;
  args?: { index: number; value: number; valueTwo: number; op: string }[];
  errnoRet?: number;
  [key: string]: unknown;
}

/**
 * The runtime's default seccomp profile (`base`, the JSON of containers-common's
 * seccomp.json, which Docker reads as well) with one change: no call can give a file a set-id
 * bit. Every other rule stays as it is. Throws when `base` is not such a profile.
 */
export function containerSeccompProfile(base: unknown): Record<string, unknown> {
  const profile = base as { defaultAction?: unknown; syscalls?: SeccompRule[] };
  if (
    typeof profile?.defaultAction !== "string" || !Array.isArray(profile.syscalls) ||
    profile.defaultAction === "SCMP_ACT_ALLOW"
  ) {
    throw new Error("not a seccomp profile that allows only what it lists");
  }
  const guarded = new Set([...MODE_CALLS.map(([name]) => name), ...UNFILTERABLE_CALLS]);
  const syscalls: SeccompRule[] = [];
  for (const rule of profile.syscalls) {
    if (rule.action !== "SCMP_ACT_ALLOW" || !Array.isArray(rule.names)) {
      syscalls.push(rule);
      continue;
    }
    const names = rule.names.filter((name) => !guarded.has(name));
    if (names.length > 0) syscalls.push({ ...rule, names });
  }
  for (const [name, index] of MODE_CALLS) {
    syscalls.push({
      names: [name],
      action: "SCMP_ACT_ALLOW",
      args: [{ index, value: SET_ID_BITS, valueTwo: 0, op: "SCMP_CMP_MASKED_EQ" }],
    });
  }
  // ENOSYS: "this kernel has no such call", which makes callers use the filtered ones.
  syscalls.push({ names: UNFILTERABLE_CALLS, action: "SCMP_ACT_ERRNO", errnoRet: 38 });
  return { ...profile, syscalls };
}

/** A file or folder the runtime client reads: absolute (never read as an option), one line. */
/**
 * Podman's `--ulimit` flags: its defaults are above the hard limits of many machines, and a
 * limit above the hard limit Deft itself runs under (a container, a CI runner, a login with a
 * low `ulimit -Hu`) fails the start with "error setting rlimit … operation not permitted". So
 * the wanted limits, each lowered to Deft's own hard limit where that is known.
 */
export function podmanLimits(nproc: number, limits = ownHardLimits()): string[] {
  const files = Math.min(1024, limits.files ?? 1024);
  const processes = Math.min(nproc, limits.processes ?? nproc);
  return ["--ulimit", `nofile=${files}:${files}`, "--ulimit", `nproc=${processes}:${processes}`];
}

/**
 * Deft's own hard limits on open files and processes (absent where unknown), as `text` gives
 * them: `ulimit -Hu` then `ulimit -Hn`, one a line ("unlimited" or a number). Deno refuses to read
 * /proc/self/limits without every permission, so a bash asks, once per process (a few
 * milliseconds, only when Podman is about to be asked for limits).
 */
export function ownHardLimits(text = askLimits()): { files?: number; processes?: number } {
  const [processes, files] = text.split("\n").map((line) => line.trim());
  const number = (value: string | undefined) =>
    value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
  return { files: number(files), processes: number(processes) };
}

let askedLimits: string | undefined;

function askLimits(): string {
  if (askedLimits !== undefined) return askedLimits;
  try {
    const out = runChildSync(probeLaunch("bash", ["-c", "ulimit -Hu; ulimit -Hn"]));
    askedLimits = out.success ? new TextDecoder().decode(out.stdout) : "";
  } catch {
    askedLimits = ""; // no bash to ask (or not allowed to run it): the limits are not known
  }
  return askedLimits;
}

function checkClientPath(what: string, path: string): void {
  if (!path.startsWith("/") || /[\n\r\0]/.test(path)) {
    throw new Error(`the ${what} ${JSON.stringify(path)} must be an absolute path on one line`);
  }
}

/** What `--dockerfile-path` builds. */
export interface ContainerBuild {
  /** The Dockerfile, an absolute path. */
  dockerfile: string;
  /** The build context, an absolute folder. */
  context: string;
  /** The name the built image gets (Deft chooses it, so it can remove the image later). */
  tag: string;
  labels: Record<string, string>;
  /** The network of the build's RUN steps; `none` unless the config allows the network. */
  network: "none" | "host";
}

/**
 * Builds an image: `-q` (the output is the image's id), no pull (podman's `--pull=never`; docker's
 * builder fetches a missing base only when its daemon reaches a registry), the build's RUN steps
 * on the given network, podman with the same rlimits as `run`.
 */
export function containerBuildLaunch(cli: ContainerCli, build: ContainerBuild): Launch {
  checkContainerWord("image", build.tag);
  checkClientPath("Dockerfile", build.dockerfile);
  checkClientPath("build context", build.context);
  const args = ["build", "-q", "--network", build.network, "-t", build.tag];
  for (const [key, value] of Object.entries(build.labels)) {
    if (!/^[a-z0-9.-]+$/.test(key) || /[\n\r]/.test(value)) {
      throw new Error(`image label ${key} is not a plain label`);
    }
    args.push("--label", `${key}=${value}`);
  }
  if (cli.program === "podman") args.push("--pull=never", ...podmanLimits(4096));
  args.push("-f", build.dockerfile, "--", build.context);
  return containerCli(cli, args);
}

/** `load -i TAR`: the images of a `docker save` / `podman save` archive; prints their names. */
export function containerLoadLaunch(cli: ContainerCli, tar: string): Launch {
  checkClientPath("image file", tar);
  return containerCli(cli, ["load", "-q", "-i", tar]);
}

/** The ids of every image (`label`: only those carrying it, a `KEY=VALUE`). */
export function containerImagesLaunch(cli: ContainerCli, label?: string): Launch {
  return containerCli(cli, [
    "images",
    "-q",
    "--no-trunc",
    ...(label ? ["--filter", `label=${label}`] : []),
  ]);
}

/** Every tagged image, one `NAME:TAG ID` a line (the id in full). */
export function containerImageTagsLaunch(cli: ContainerCli): Launch {
  return containerCli(cli, [
    "images",
    "--no-trunc",
    "--format",
    "{{.Repository}}:{{.Tag}} {{.ID}}",
  ]);
}

/** Gives the image `source` (a name or an id) the name `target` too. */
export function containerTagLaunch(cli: ContainerCli, source: string, target: string): Launch {
  checkContainerWord("image", source);
  checkContainerWord("image", target);
  return containerCli(cli, ["tag", source, target]);
}

/** Removes images (a name removes that tag; an id the image), never one a container uses. */
export function containerImageRemoveLaunch(cli: ContainerCli, refs: readonly string[]): Launch {
  for (const ref of refs) checkContainerWord("image", ref);
  return containerCli(cli, ["image", "rm", "--", ...refs]);
}

/**
 * Runs `exec.argv` inside container `id`: argv as it is (the runtime passes it to execve, no
 * shell), the variables `exec.env` names with their values (a bare name would copy the client's
 * own value in, so every one carries `=`).
 */
export function containerExecLaunch(cli: ContainerCli, id: string, exec: ContainerExec): Launch {
  checkContainerWord("container", id);
  const args = ["exec"];
  if (exec.interactive) args.push("-i");
  if (exec.workdir) args.push("-w", exec.workdir);
  for (const [name, value] of Object.entries(exec.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`bad variable name ${name}`);
    args.push("-e", `${name}=${value}`);
  }
  args.push("--", id, ...exec.argv);
  return containerCli(cli, args);
}
