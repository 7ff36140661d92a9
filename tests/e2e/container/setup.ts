/**
 * Real container runtimes for the container tests: a private Docker daemon the test starts and
 * stops (scripts/containers/dockerd.sh), Podman as installed, and the test image built from
 * Debian packages and cached per machine (scripts/containers/build-test-image.sh). A runtime
 * that cannot start fails the test: nothing here skips.
 */
import { REPO_ROOT } from "../../helpers/deft.ts";

const SCRIPTS = `${REPO_ROOT}scripts/containers`;

/** A runtime ready for tests: its client's variables, the test image, a way to run its client. */
export interface TestRuntime {
  name: "docker" | "podman";
  /**
   * Variables Deft and the client need: DOCKER_HOST for the private daemon, and DEFT_CACHE_DIR, a
   * private cache whose secret proves which containers this test's Defts started.
   */
  env: Record<string, string>;
  image: string;
  /** Runs the client with `args` (podman with runc); stdout, trimmed. Throws on failure. */
  cli(...args: string[]): Promise<string>;
  /**
   * Ids of the containers this test's Defts started (run with `env`): Deft's label, and a proof
   * made under this test's private secret. Another suite's, or a user's Deft's, on the same
   * runtime are not counted.
   */
  deftContainers(): Promise<string[]>;
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
  const cache = await Deno.makeTempDir({ prefix: "deft-test-cache-" });
  let env: Record<string, string> = {};
  let stop = async () => {};
  if (name === "docker") {
    // A short path: the socket's path must fit a unix socket's 107 bytes.
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "dkd-" });
    const said = await run(`${SCRIPTS}/dockerd.sh`, ["start", dir]);
    env = { DOCKER_HOST: said.replace(/^export DOCKER_HOST=/, "") };
    stop = async () => {
      await run(`${SCRIPTS}/dockerd.sh`, ["stop", dir]).catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    };
  }
  const stopDaemon = stop;
  stop = async () => {
    await stopDaemon();
    await Deno.remove(cache, { recursive: true }).catch(() => {});
  };
  env = { ...env, DEFT_CACHE_DIR: cache };
  let image: string;
  try {
    image = (await run(`${SCRIPTS}/build-test-image.sh`, [name], env)).split("\n").at(-1)!;
  } catch (e) {
    await stop();
    throw e;
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
  return {
    name,
    env,
    image,
    cli,
    deftContainers: async () => {
      const ids = (await cli("ps", "-a", "-q", "--no-trunc", "--filter", "label=deft.container=1"))
        .split("\n").filter(Boolean);
      const mine: string[] = [];
      for (const id of ids) {
        const said = await cli("container", "inspect", id).catch(() => "[]");
        const [info] = JSON.parse(said) as {
          Name?: string;
          Config?: { Labels?: Record<string, string> | null };
        }[];
        const labels = info?.Config?.Labels ?? {};
        const name = (info?.Name ?? "").replace(/^\//, "");
        if (await provenBy(cache, name, labels["deft.run"], labels["deft.proof"])) mine.push(id);
      }
      return mine;
    },
    [Symbol.asyncDispose]: stop,
  };
}

/** True when `proof` is the HMAC of `container:NAME:RUN` under the secret in `cache`. */
async function provenBy(
  cache: string,
  name: string,
  run: string | undefined,
  proof: string | undefined,
): Promise<boolean> {
  if (!run || !proof) return false;
  let secret: string;
  try {
    secret = (await Deno.readTextFile(`${cache}/containers/secret`)).trim();
  } catch {
    return false;
  }
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signed = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(`container:${name}:${run}`),
  );
  const hex = [...new Uint8Array(signed)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return hex === proof;
}

/**
 * An image with no C library at all: a static busybox (from Debian's busybox-static) as cat,
 * test, mkdir and sh. Deft's Deno cannot start there.
 */
export async function noGlibcImage(rt: TestRuntime): Promise<string> {
  const name = "deft-test-noglibc:1";
  if (await rt.cli("image", "inspect", name).then(() => true, () => false)) return name;
  const dir = await Deno.makeTempDir({ prefix: "noglibc-" });
  try {
    await Deno.mkdir(`${dir}/root/bin`, { recursive: true });
    await Deno.mkdir(`${dir}/root/tmp`, { mode: 0o1777 });
    await Deno.copyFile("/bin/busybox", `${dir}/root/bin/busybox`);
    await Deno.chmod(`${dir}/root/bin/busybox`, 0o755);
    for (const tool of ["cat", "test", "mkdir", "sh"]) {
      await Deno.symlink("busybox", `${dir}/root/bin/${tool}`);
    }
    await run("tar", ["-C", `${dir}/root`, "-cf", `${dir}/root.tar`, "."]);
    await rt.cli("import", "-c", "ENV PATH=/bin", `${dir}/root.tar`, name);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return name;
}
