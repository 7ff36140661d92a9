/**
 * The set-up `deno task test` runs before the tests: checks that the programs and files the tests
 * drive are on this machine and installs what is missing through apt-get, as root or with a sudo
 * that asks no password. Where it cannot install, it stops with one message naming the packages
 * and the command to run, so a fresh machine sees one clear failure instead of scattered ones.
 *
 *   deno run --allow-read --allow-run --allow-env --allow-sys scripts/test_setup.ts [--unit]
 *
 * `--unit` checks only what the unit tests (everything outside tests/e2e/) need. With everything
 * present it spawns nothing: a few file checks, milliseconds. The list below is the one list of
 * what the tests need; CONTRIBUTING.md and `.ci/run` point here.
 */

/** Something the tests need, the Debian packages that give it, and how to see it is there. */
export interface Need {
  /** What a reader is told is missing: a program's name or a short description. */
  what: string;
  /** The Debian packages that provide it. */
  packages: readonly string[];
  /** True when it is present. */
  present(probe: Probe): boolean;
  /** True when only tests under tests/e2e/ use it. */
  e2eOnly?: boolean;
}

/** How the set-up looks at the machine: the PATH it searches and the files it reads. */
export interface Probe {
  /** True when an executable `name` is in one of the PATH folders. */
  hasProgram(name: string): boolean;
  /** True when `path` (absolute) is a folder. */
  isDir(path: string): boolean;
  /** The bytes of `path` (absolute), or undefined when it cannot be read. */
  read(path: string): Uint8Array | undefined;
}

const program = (name: string) => (p: Probe) => p.hasProgram(name);

/** Everything the tests need. The one list: nothing else installs test dependencies. */
export const NEEDS: readonly Need[] = [
  { what: "bwrap", packages: ["bubblewrap"], present: program("bwrap") },
  { what: "git", packages: ["git"], present: program("git") },
  // A few tests drive a terminal through Python's pty module.
  { what: "python3", packages: ["python3"], present: program("python3") },
  // The code graph is compared with ctags' answers.
  { what: "ctags", packages: ["universal-ctags"], present: program("ctags") },
  // ps, pgrep, pkill: owner tags of containers, and tests that look for processes left behind.
  {
    what: "pgrep",
    packages: ["procps"],
    present: (p) => p.hasProgram("pgrep") && p.hasProgram("ps"),
  },
  // Tests run a part as a user who is not root (tests/helpers/as_nobody.ts) with setpriv.
  { what: "setpriv", packages: ["util-linux"], present: program("setpriv") },
  // C sources the code-graph prefilter test reads (tests/ckg/prefilter_test.ts).
  {
    what: "nettle's example sources",
    packages: ["nettle-dev"],
    present: (p) => p.isDir("/usr/share/doc/nettle-dev/examples"),
  },
  {
    what: "zlib's example sources",
    packages: ["zlib1g-dev"],
    present: (p) => p.isDir("/usr/share/doc/zlib1g-dev/examples"),
  },
  // `deft batch --slurm` tests start a real one-node cluster (scripts/slurm/start-local-slurm.sh).
  {
    what: "Slurm (slurmctld, slurmd, sbatch) and munged",
    packages: ["slurmctld", "slurmd", "slurm-client", "munge"],
    present: (p) => ["slurmctld", "slurmd", "sbatch", "munged"].every((n) => p.hasProgram(n)),
    e2eOnly: true,
  },
  // The tool worker's permission test (tests/e2e/policy/permissions_test.ts) has Deno refuse to
  // run curl; Deno looks the program up first, so without curl it fails as not found instead.
  { what: "curl", packages: ["curl"], present: program("curl"), e2eOnly: true },
  // Container tests drive a private dockerd and Podman (with runc) on an image debootstrap makes.
  { what: "dockerd", packages: ["docker.io"], present: program("dockerd"), e2eOnly: true },
  { what: "podman", packages: ["podman"], present: program("podman"), e2eOnly: true },
  { what: "runc", packages: ["runc"], present: program("runc"), e2eOnly: true },
  {
    what: "debootstrap",
    packages: ["debootstrap"],
    present: program("debootstrap"),
    e2eOnly: true,
  },
  // `deft report` pages are opened in headless Chromium (tests/e2e/report/browser_test.ts).
  { what: "chromium", packages: ["chromium"], present: program("chromium"), e2eOnly: true },
  // A static busybox makes the image without a C library that Deft must refuse clearly.
  {
    what: "a static /bin/busybox",
    packages: ["busybox-static"],
    present: (p) => isStaticElf(p.read("/bin/busybox")),
    e2eOnly: true,
  },
];

/** The user tests drop to (tests/helpers/as_nobody.ts): uid and gid 65534. */
export const NOBODY_UID = 65534;

/** True when `bytes` is a 64-bit ELF executable with no program interpreter (statically linked). */
export function isStaticElf(bytes: Uint8Array | undefined): boolean {
  if (!bytes || bytes.length < 64) return false;
  if (bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
    return false;
  }
  if (bytes[4] !== 2 || bytes[5] !== 1) return false; // 64-bit, little-endian
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const phoff = Number(view.getBigUint64(0x20, true));
  const phentsize = view.getUint16(0x36, true);
  const phnum = view.getUint16(0x38, true);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + 4 > bytes.length) return false;
    if (view.getUint32(at, true) === 3) return false; // PT_INTERP: it needs ld.so
  }
  return true;
}

/** True when `/etc/passwd` (as `probe` reads it) has a user with uid 65534. */
export function hasNobody(probe: Probe): boolean {
  const passwd = probe.read("/etc/passwd");
  if (!passwd) return false;
  return new TextDecoder().decode(passwd).split("\n")
    .some((line) => line.split(":")[2] === String(NOBODY_UID));
}

/** What is missing: the needs not met, and whether the uid 65534 user is. */
export interface Missing {
  needs: Need[];
  nobody: boolean;
}

/** The needs of `scope` that `probe` does not find. */
export function findMissing(probe: Probe, scope: "all" | "unit"): Missing {
  const needs = NEEDS.filter((n) => (scope === "all" || !n.e2eOnly) && !n.present(probe));
  return { needs, nobody: !hasNobody(probe) };
}

/** The packages `missing` names, each once, in NEEDS order. */
export function packagesOf(missing: Missing): string[] {
  return [...new Set(missing.needs.flatMap((n) => n.packages))];
}

/** The commands that install what is missing, each an argv (before any `sudo -n`). */
export function installCommands(missing: Missing): string[][] {
  const commands: string[][] = [];
  const packages = packagesOf(missing);
  if (packages.length > 0) {
    commands.push(["apt-get", "update", "-qq"]);
    commands.push(["apt-get", "install", "-y", "-qq", ...packages]);
  }
  if (missing.nobody) {
    commands.push(["sh", "-c", NOBODY_SCRIPT]);
  }
  return commands;
}

// Debian's base-passwd makes these; a trimmed image may lack them.
const NOBODY_SCRIPT =
  `getent group ${NOBODY_UID} >/dev/null || groupadd -g ${NOBODY_UID} nogroup; ` +
  `useradd -u ${NOBODY_UID} -g ${NOBODY_UID} -M -d /nonexistent -s /usr/sbin/nologin nobody`;

/** What the set-up does: nothing, install (as root or through `sudo -n`), or stop and say why. */
export type Plan =
  | { kind: "ready" }
  | { kind: "install"; prefix: string[]; commands: string[][] }
  | { kind: "stop"; message: string };

/** Facts about who runs the set-up. */
export interface Runner {
  root: boolean;
  /** True when `sudo -n true` succeeds (asked only when something is missing and not root). */
  sudo: () => Promise<boolean>;
  /** True when apt-get is on PATH. */
  apt: boolean;
}

/** Decides what to do about `missing`. */
export async function plan(missing: Missing, runner: Runner): Promise<Plan> {
  if (missing.needs.length === 0 && !missing.nobody) return { kind: "ready" };
  const commands = installCommands(missing);
  if (!runner.apt && missing.needs.length > 0) {
    return { kind: "stop", message: stopMessage(missing, "apt-get is not on PATH") };
  }
  if (runner.root) return { kind: "install", prefix: [], commands };
  if (await runner.sudo()) return { kind: "install", prefix: ["sudo", "-n"], commands };
  return {
    kind: "stop",
    message: stopMessage(missing, "not root, and sudo is missing or asks for a password"),
  };
}

/** The one message shown when the set-up cannot install: what is missing and how to install it. */
export function stopMessage(missing: Missing, why: string): string {
  const lines = ["", "No test was run: the tests need what this machine does not have:"];
  for (const need of missing.needs) lines.push(`  ${need.what} (${need.packages.join(" ")})`);
  if (missing.nobody) lines.push(`  a user with uid ${NOBODY_UID} (nobody)`);
  lines.push(`The set-up could not install them (${why}). Install them, then run the tests again:`);
  const packages = packagesOf(missing);
  if (packages.length > 0) {
    lines.push(`  sudo apt-get update && sudo apt-get install -y ${packages.join(" ")}`);
  }
  if (missing.nobody) lines.push(`  sudo sh -c '${NOBODY_SCRIPT}'`);
  if (packages.length > 0) {
    lines.push("(Debian and Ubuntu package names; on another system, install the same programs.)");
  }
  return lines.join("\n");
}

/** A Probe of this machine: programs in `path`'s folders; absolute paths read under `root`. */
export function machineProbe(path: string, root = ""): Probe {
  const dirs = path.split(":").filter(Boolean);
  return {
    hasProgram: (name) => dirs.some((dir) => isExecutable(`${dir}/${name}`)),
    isDir: (p) => statOf(`${root}${p}`)?.isDirectory ?? false,
    read: (p) => {
      try {
        return Deno.readFileSync(`${root}${p}`);
      } catch {
        return undefined;
      }
    },
  };
}

function statOf(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.statSync(path);
  } catch {
    return undefined;
  }
}

function isExecutable(path: string): boolean {
  const info = statOf(path);
  return !!info?.isFile && ((info.mode ?? 0) & 0o111) !== 0;
}

/** The first `name` in `path`'s folders, or undefined. */
export function which(name: string, path: string): string | undefined {
  return path.split(":").filter(Boolean).map((d) => `${d}/${name}`).find(isExecutable);
}

/**
 * Programs of root's own in sbin folders: a user's PATH may lack them (Debian leaves /usr/sbin out
 * of an ordinary user's PATH) though the tests, run as root, find them.
 */
const SBIN = ["/usr/local/sbin", "/usr/sbin", "/sbin"];

/** The PATH the set-up searches: the caller's, then the sbin folders it lacks. */
export function searchPath(path: string): string {
  const dirs = path.split(":").filter(Boolean);
  return [...dirs, ...SBIN.filter((d) => !dirs.includes(d))].join(":");
}

/** Options of one set-up: the machine it looks at and who runs it. */
export interface SetUpOptions {
  scope: "all" | "unit";
  /** The PATH programs are looked for in and the install commands are found in. */
  path: string;
  uid: number;
  /** Where messages go. */
  say: (line: string) => void;
}

/** Runs the set-up; returns the exit code (0: the tests may run). */
export async function setUp(opts: SetUpOptions): Promise<number> {
  const path = searchPath(opts.path);
  const probe = machineProbe(path);
  const missing = findMissing(probe, opts.scope);
  const decided = await plan(missing, {
    root: opts.uid === 0,
    apt: which("apt-get", path) !== undefined,
    sudo: async () => which("sudo", path) !== undefined && await runs(["sudo", "-n", "true"], path),
  });
  if (decided.kind === "ready") return 0;
  if (decided.kind === "stop") {
    opts.say(decided.message);
    return 1;
  }
  const via = decided.prefix.length > 0 ? "with sudo" : "as root";
  const names = [
    ...packagesOf(missing),
    ...(missing.nobody ? [`user ${NOBODY_UID}`] : []),
  ];
  opts.say(`test set-up: installing ${names.join(" ")} (${via})`);
  for (const command of decided.commands) {
    if (!await runs([...decided.prefix, ...command], path, true)) {
      opts.say(stopMessage(missing, `\`${command.join(" ")}\` failed`));
      return 1;
    }
  }
  const still = findMissing(probe, opts.scope);
  if (still.needs.length > 0 || still.nobody) {
    opts.say(stopMessage(still, "they are still missing after the install"));
    return 1;
  }
  return 0;
}

/**
 * Runs `argv` (its program found in `path`); true when it exits 0. With `show`, its errors reach
 * the terminal (apt's progress lines do not: the set-up says once what it installs).
 */
async function runs(argv: string[], path: string, show = false): Promise<boolean> {
  const exe = which(argv[0], path);
  if (!exe) return false;
  const out = await new Deno.Command(exe, {
    args: argv.slice(1),
    clearEnv: true,
    // needrestart (when installed) asks nothing and says nothing after an install.
    env: {
      PATH: path,
      DEBIAN_FRONTEND: "noninteractive",
      NEEDRESTART_SUSPEND: "1",
      LANG: "C.UTF-8",
    },
    stdin: "null",
    stdout: "null",
    stderr: show ? "inherit" : "null",
  }).output();
  return out.success;
}

if (import.meta.main) {
  const unknown = Deno.args.filter((a) => a !== "--unit");
  if (unknown.length > 0) {
    console.error(`test_setup: unknown argument ${unknown[0]} (usage: test_setup.ts [--unit])`);
    Deno.exit(2);
  }
  Deno.exit(
    await setUp({
      scope: Deno.args.includes("--unit") ? "unit" : "all",
      path: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      uid: Deno.uid() ?? -1,
      say: (line) => console.error(line),
    }),
  );
}
