/**
 * The test set-up's decisions (scripts/test_setup.ts) on a stub machine: PATH folders holding
 * fake programs and a stub file tree. Present → nothing runs; missing as root → apt-get installs
 * exactly the missing packages; missing, not root, no sudo → one message naming every package and
 * the command to run; and every program a test starts by name is one the set-up provides.
 */
import assert from "node:assert/strict";
import {
  findMissing,
  installCommands,
  isStaticElf,
  machineProbe,
  NEEDS,
  plan,
  type Runner,
} from "../../scripts/test_setup.ts";
import { tempDir } from "../helpers/temp.ts";

/** Every program any need looks for. */
const PROGRAMS = [
  "bwrap",
  "git",
  "python3",
  "ctags",
  "pgrep",
  "ps",
  "setpriv",
  "slurmctld",
  "slurmd",
  "sbatch",
  "munged",
  "dockerd",
  "podman",
  "runc",
  "debootstrap",
  "chromium",
  "curl",
];

/** A 64-bit ELF header with one program header of type `type` (3: PT_INTERP). */
function elf(type: number): Uint8Array {
  const bytes = new Uint8Array(64 + 56);
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0x20, 64n, true);
  view.setUint16(0x36, 56, true);
  view.setUint16(0x38, 1, true);
  view.setUint32(64, type, true);
  return bytes;
}

/** A stub machine: `bin/` with `programs` (executable), a file tree with everything else. */
async function stubMachine(dir: string, programs: string[], opts: { nobody?: boolean } = {}) {
  await Deno.mkdir(`${dir}/bin`);
  for (const name of programs) {
    await Deno.writeTextFile(`${dir}/bin/${name}`, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  }
  // Not executable: a file of that name that cannot run is no program.
  await Deno.writeTextFile(`${dir}/bin/not-a-program`, "", { mode: 0o644 });
  const root = `${dir}/root`;
  for (const d of ["nettle-dev", "zlib1g-dev"]) {
    await Deno.mkdir(`${root}/usr/share/doc/${d}/examples`, { recursive: true });
  }
  await Deno.mkdir(`${root}/bin`, { recursive: true });
  await Deno.writeFile(`${root}/bin/busybox`, elf(1));
  await Deno.mkdir(`${root}/etc`);
  const nobody = opts.nobody === false
    ? ""
    : "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n";
  await Deno.writeTextFile(`${root}/etc/passwd`, `root:x:0:0::/root:/bin/bash\n${nobody}`);
  return machineProbe(`${dir}/bin`, root);
}

const runner = (over: Partial<Runner>): Runner => ({
  root: false,
  apt: true,
  sudo: () => Promise.resolve(false),
  ...over,
});

Deno.test("test set-up: with everything present it plans nothing (and asks nobody for sudo)", async () => {
  await using dir = await tempDir();
  const probe = await stubMachine(dir.path, PROGRAMS);
  const missing = findMissing(probe, "all");
  assert.deepEqual(missing.needs.map((n) => n.what), []);
  assert.equal(missing.nobody, false);
  let askedSudo = false;
  const decided = await plan(missing, runner({ sudo: () => Promise.resolve(askedSudo = true) }));
  assert.deepEqual(decided, { kind: "ready" });
  assert.equal(askedSudo, false);
});

Deno.test("test set-up: as root, apt-get installs exactly what is missing", async () => {
  await using dir = await tempDir();
  const probe = await stubMachine(
    dir.path,
    PROGRAMS.filter((p) => !["bwrap", "ctags", "podman", "sbatch"].includes(p)),
    { nobody: false },
  );
  const missing = findMissing(probe, "all");
  const decided = await plan(missing, runner({ root: true }));
  assert.equal(decided.kind, "install");
  if (decided.kind !== "install") return;
  assert.deepEqual(decided.prefix, []);
  assert.deepEqual(decided.commands.slice(0, 2), [
    ["apt-get", "update", "-qq"],
    [
      "apt-get",
      "install",
      "-y",
      "-qq",
      "bubblewrap",
      "universal-ctags",
      "slurmctld",
      "slurmd",
      "slurm-client",
      "munge",
      "podman",
    ],
  ]);
  // The uid 65534 user is made too.
  assert.match(decided.commands[2].join(" "), /useradd -u 65534/);
});

Deno.test("test set-up: not root, sudo without a password → the same commands through sudo -n", async () => {
  await using dir = await tempDir();
  const probe = await stubMachine(dir.path, PROGRAMS.filter((p) => p !== "git"));
  const decided = await plan(
    findMissing(probe, "all"),
    runner({ sudo: () => Promise.resolve(true) }),
  );
  assert.deepEqual(decided, {
    kind: "install",
    prefix: ["sudo", "-n"],
    commands: [["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "git"]],
  });
});

Deno.test("test set-up: not root and no sudo → one message with every package and the command", async () => {
  await using dir = await tempDir();
  const probe = await stubMachine(
    dir.path,
    PROGRAMS.filter((p) => !["bwrap", "dockerd", "runc"].includes(p)),
  );
  const decided = await plan(findMissing(probe, "all"), runner({}));
  assert.equal(decided.kind, "stop");
  if (decided.kind !== "stop") return;
  assert.match(decided.message, /bwrap \(bubblewrap\)/);
  assert.match(decided.message, /dockerd \(docker\.io\)/);
  assert.match(decided.message, /not root, and sudo is missing or asks for a password/);
  assert.match(
    decided.message,
    /sudo apt-get update && sudo apt-get install -y bubblewrap docker\.io runc\n/,
  );
});

Deno.test("test set-up: without apt-get it stops and names the packages", async () => {
  await using dir = await tempDir();
  const probe = await stubMachine(dir.path, PROGRAMS.filter((p) => p !== "python3"));
  const decided = await plan(findMissing(probe, "all"), runner({ root: true, apt: false }));
  assert.equal(decided.kind, "stop");
  if (decided.kind !== "stop") return;
  assert.match(decided.message, /python3 \(python3\)/);
  assert.match(decided.message, /apt-get is not on PATH/);
});

Deno.test("test set-up: --unit asks only for what tests outside tests/e2e/ use", async () => {
  await using dir = await tempDir();
  const probe = await stubMachine(dir.path, ["git", "python3", "dockerd"]);
  const unit = findMissing(probe, "unit").needs.map((n) => n.what);
  assert.ok(unit.includes("bwrap") && unit.includes("ctags"), unit.join(", "));
  assert.ok(!unit.includes("podman") && !unit.includes("runc"), unit.join(", "));
  assert.ok(findMissing(probe, "all").needs.some((n) => n.what === "podman"));
});

Deno.test("test set-up: a file that is not executable is no program; busybox must be static", async () => {
  await using dir = await tempDir();
  const probe = await stubMachine(dir.path, []);
  assert.equal(probe.hasProgram("not-a-program"), false);
  assert.equal(isStaticElf(elf(1)), true);
  assert.equal(isStaticElf(elf(3)), false);
  assert.equal(isStaticElf(new TextEncoder().encode("#!/bin/sh\n")), false);
  // The stub tree's busybox has no interpreter: present.
  const busybox = NEEDS.find((n) => n.packages.includes("busybox-static"))!;
  assert.equal(busybox.present(probe), true);
});

Deno.test("test set-up: every package in the list installs through one apt-get line", () => {
  const commands = installCommands({ needs: [...NEEDS], nobody: false });
  assert.equal(commands.length, 2);
  assert.deepEqual(commands[1].slice(0, 4), ["apt-get", "install", "-y", "-qq"]);
  for (const pkg of ["bubblewrap", "docker.io", "podman", "busybox-static", "util-linux"]) {
    assert.ok(commands[1].includes(pkg), pkg);
  }
});

/**
 * Programs a test starts by name that a fresh Debian 12 machine with Node.js and npm has before the
 * set-up runs (its essential packages), or that come in a package NEEDS already installs, each
 * with where it comes from.
 */
const WITHOUT_A_NEED: Record<string, string> = {
  sh: "dash (essential)",
  bash: "bash (essential)",
  cat: "coreutils (essential)",
  chmod: "coreutils (essential)",
  chown: "coreutils (essential)",
  cp: "coreutils (essential)",
  ls: "coreutils (essential)",
  mkfifo: "coreutils (essential)",
  sleep: "coreutils (essential)",
  true: "coreutils (essential)",
  getent: "libc-bin (essential)",
  script: "bsdutils (essential)",
  unshare: "util-linux",
  prlimit: "util-linux",
  kill: "procps",
  pkill: "procps",
  docker: "docker.io",
  npx: "npm (on the machine with Node.js)",
  deft: "(installed by the test that runs it)",
};

/** Every file under `dir` whose name ends in `.ts`. */
async function sources(dir: string, out: string[] = []): Promise<string[]> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) await sources(path, out);
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

Deno.test("test set-up: every program a test starts by name is in the list or on a fresh machine", async () => {
  // The programs each need looks for: a probe that finds everything records what it is asked.
  const looked: string[] = [];
  const everything = {
    hasProgram: (name: string) => looked.push(name) > 0,
    isDir: () => true,
    read: () => undefined,
  };
  for (const need of NEEDS) need.present(everything);
  const packages = new Set(NEEDS.flatMap((n) => n.packages));
  for (const [name, from] of Object.entries(WITHOUT_A_NEED)) {
    const pkg = from.split(" ")[0];
    if (!from.includes("(")) assert.ok(packages.has(pkg), `${name}: ${pkg} is not in NEEDS`);
  }
  const tests = new URL("../", import.meta.url).pathname;
  const started = new Map<string, string>();
  for (const file of await sources(tests.replace(/\/$/, ""))) {
    const text = await Deno.readTextFile(file);
    for (const m of text.matchAll(/new\s+Deno\.Command\(\s*["']([^"']+)["']/g)) {
      started.set(m[1].split("/").pop()!, file.slice(tests.length));
    }
  }
  assert.ok(started.has("git") && started.size > 10, [...started.keys()].join(" "));
  const unlisted = [...started].filter(([name]) =>
    !looked.includes(name) && !(name in WITHOUT_A_NEED)
  ).map(([name, file]) => `${name} (${file})`);
  assert.deepEqual(unlisted, [], "programs the tests start that the set-up does not install");
});

Deno.test("test set-up: deno task's install on a fresh clone warns about no skipped build script", async () => {
  // `deno task test` installs the npm packages before the set-up runs; a package with install
  // scripts Deno skips gets a warning box there, just above the set-up's message, unless
  // deno.json says it is skipped on purpose (`allowScripts.deny`). Deft runs none of them: the
  // grammars are loaded as WebAssembly, and protobufjs's script serves its command-line tool.
  const root = new URL("../../", import.meta.url);
  const lock = JSON.parse(await Deno.readTextFile(new URL("deno.lock", root)));
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const denied = new Set<string>(config.allowScripts?.deny ?? []);
  const withScripts = Object.entries(lock.npm as Record<string, { scripts?: boolean }>)
    .filter(([, info]) => info.scripts).map(([id]) => id.replace(/@[^@]*$/, ""));
  assert.ok(withScripts.length > 0, "the lockfile marks packages with install scripts");
  const warned = withScripts.filter((name) => !denied.has(`npm:${name}`));
  assert.deepEqual([...new Set(warned)], [], "add these to deno.json's allowScripts.deny");
});
