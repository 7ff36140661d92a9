/**
 * Real container runtimes for the container tests: a private Docker daemon the test starts and
 * stops (scripts/containers/dockerd.sh), Podman as installed, and the test image built from
 * Debian packages and cached per machine (scripts/containers/build-test-image.sh). A runtime
 * that cannot start fails the test: nothing here skips.
 *
 * Two suites (or a user's Deft) may use the same Podman at once, so each TestRuntime is one run:
 * its image is the test image plus one layer of labels, `deft.test.run=ID` with an ID of its own,
 * and every container started from it, and every image built from it, inherits that label. A
 * test asks about its own run's containers and images only, and leaving the block removes them.
 */
import { REPO_ROOT } from "./deft.ts";
import { tempDir } from "./temp.ts";

const SCRIPTS = `${REPO_ROOT}scripts/containers`;

/** A runtime ready for tests: its client's variables, the test image, a way to run its client. */
export interface TestRuntime {
  name: "docker" | "podman";
  /**
   * Variables Deft and the client need: DOCKER_HOST for the private daemon, and DEFT_CACHE_DIR, a
   * private cache whose secret proves which containers this run's Defts started (so a sweep by
   * one suite never counts another's as its own).
   */
  env: Record<string, string>;
  /** The test image, as this run's own (its containers carry `label`). */
  image: string;
  /** This run's label, `deft.test.run=ID`, on its image and all that comes from it. */
  label: string;
  /** Runs the client with `args` (podman with runc); stdout, trimmed. Throws on failure. */
  cli(...args: string[]): Promise<string>;
  /** Ids of this run's containers that carry Deft's label (another run's never count). */
  deftContainers(): Promise<string[]>;
  /** `image` as this run's own: a layer that adds `label` (removed with the run). */
  own(image: string): Promise<string>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function run(program: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(program, { args, env, stdin: "null" }).output();
  const stdout = new TextDecoder().decode(out.stdout).trim();
  const stderr = new TextDecoder().decode(out.stderr).trim();
  if (!out.success) {
    throw new Error(`${program} ${args.join(" ")} failed (${out.code}): ${stderr || stdout}`);
  }
  return stdout;
}

/** Starts a private dockerd (or uses Podman), builds or finds the test image. */
export async function testRuntime(name: "docker" | "podman"): Promise<TestRuntime> {
  const cache = await tempDir("deft-test-cache-");
  let env: Record<string, string> = { DEFT_CACHE_DIR: cache.path };
  let stop = async () => {
    await cache.remove();
  };
  if (name === "docker") {
    // A short path: the socket's path must fit a unix socket's 107 bytes.
    const dir = await tempDir("dkd-", { dir: "/tmp" });
    try {
      const said = await run(`${SCRIPTS}/dockerd.sh`, ["start", dir.path]);
      env = { ...env, DOCKER_HOST: said.replace(/^export DOCKER_HOST=/, "") };
    } catch (e) {
      await run(`${SCRIPTS}/dockerd.sh`, ["stop", dir.path]).catch(() => {});
      await dir.remove();
      await cache.remove();
      throw e;
    }
    stop = async () => {
      await run(`${SCRIPTS}/dockerd.sh`, ["stop", dir.path]).catch(() => {});
      await dir.remove();
      await cache.remove();
    };
  }
  const prefix = name === "podman" ? ["--runtime", "runc"] : [];
  // Podman's default rlimits are above this kind of machine's hard limits (see the reference).
  const limits = name === "podman"
    ? ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1000:1000"]
    : [];
  const cli = (...args: string[]) =>
    run(
      name,
      [...prefix, ...(args[0] === "run" ? ["run", ...limits, ...args.slice(1)] : args)],
      env,
    );
  const label = `deft.test.run=${crypto.randomUUID().slice(0, 12)}`;
  const ids = async (kind: "ps" | "images", ...filters: string[]) =>
    (await cli(kind, ...(kind === "ps" ? ["-a"] : []), "-q", "--no-trunc", ...filters))
      .split("\n").filter(Boolean);
  const own = async (image: string) => {
    await using ctx = await tempDir("deft-test-run-");
    await Deno.writeTextFile(`${ctx.path}/Dockerfile`, `FROM ${image}\nLABEL ${label}\n`);
    const tag = `deft-test-run-${label.split("=")[1]}:${image.replace(/[^a-z0-9]+/g, "-")}`
      .slice(0, 120);
    await cli("build", "-q", "--network", "none", "-t", tag, ctx.path);
    return tag;
  };
  // A filter's answer is checked against each one's labels: Podman 4.3 once answered the
  // two-label filter with three containers that carried neither label, while other suites were
  // starting and removing theirs. Nothing of another's is counted, or removed, on its word.
  const [runKey, runId] = label.split("=");
  const ours = async (kind: "container" | "image", found: string[], deft = false) => {
    const keys = deft ? [runKey, "deft.container"] : [runKey];
    const format = keys.map((k) => `{{index .Config.Labels "${k}"}}`).join(" ");
    const want = deft ? `${runId} 1` : runId;
    const kept: string[] = [];
    for (const id of found) {
      if (await cli(kind, "inspect", "--format", format, id).catch(() => "") === want) {
        kept.push(id);
      }
    }
    return kept;
  };
  // This run's containers, then its images (each built one too), whatever the tests left.
  const removeOwn = async () => {
    const containers = await ids("ps", "--filter", `label=${label}`)
      .then((found) => ours("container", found), () => []);
    if (containers.length > 0) {
      await cli("rm", "-f", ...(name === "podman" ? ["-t", "0"] : []), ...containers)
        .catch(() => {});
    }
    const images = await ids("images", "--filter", `label=${label}`)
      .then((found) => ours("image", found), () => []);
    for (const id of images) await cli("rmi", "-f", id).catch(() => {});
  };
  let image: string;
  try {
    image = await own(
      (await run(`${SCRIPTS}/build-test-image.sh`, [name], env)).split("\n").at(-1)!,
    );
  } catch (e) {
    await removeOwn();
    await stop();
    throw e;
  }
  return {
    name,
    env,
    image,
    label,
    cli,
    own,
    deftContainers: async () =>
      await ours(
        "container",
        await ids("ps", "--filter", "label=deft.container=1", "--filter", `label=${label}`),
        true,
      ),
    [Symbol.asyncDispose]: async () => {
      await removeOwn();
      await stop();
    },
  };
}

/**
 * An image with no C library at all: a static busybox (from Debian's busybox-static) as cat,
 * test, mkdir and sh. Deft's Deno cannot start there. Cached by name; returned as `rt`'s own.
 */
export async function noGlibcImage(rt: TestRuntime): Promise<string> {
  const name = "deft-test-noglibc:1";
  if (await rt.cli("image", "inspect", name).then(() => true, () => false)) return rt.own(name);
  await using dir = await tempDir("noglibc-");
  await Deno.mkdir(`${dir.path}/root/bin`, { recursive: true });
  await Deno.mkdir(`${dir.path}/root/tmp`, { mode: 0o1777 });
  await Deno.copyFile("/bin/busybox", `${dir.path}/root/bin/busybox`);
  await Deno.chmod(`${dir.path}/root/bin/busybox`, 0o755);
  for (const tool of ["cat", "test", "mkdir", "sh"]) {
    await Deno.symlink("busybox", `${dir.path}/root/bin/${tool}`);
  }
  await run("tar", ["-C", `${dir.path}/root`, "-cf", `${dir.path}/root.tar`, "."]);
  await rt.cli("import", "-c", "ENV PATH=/bin", `${dir.path}/root.tar`, name);
  return rt.own(name);
}
