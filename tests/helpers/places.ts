/**
 * Real places for tests: workspaces outside `$TMPDIR` (under a fake home inside a folder in the
 * real `$HOME`, or in the checkout when `$HOME` is under /tmp; under `/srv` when it is writable), Deft run with `TMPDIR` pointing elsewhere, and
 * the bundle run under narrowed top-level permission flags — where users actually run Deft,
 * not the sheltered temp folder with every permission granted.
 */
import { join, relative } from "node:path";
import { REPO_ROOT } from "./deft.ts";
import { BUNDLE_BASE_FLAGS as BASE_FLAGS } from "./deno_flags.ts";
import { tempDirUntilExit } from "./temp.ts";

// Where the sandbox shows a private empty folder instead of the host's.
const PRIVATE_IN_SANDBOX = ["/tmp", "/var/tmp", "/dev/shm", "/run"];

/**
 * A real folder to make test folders in that is neither in the temp folder nor where the sandbox
 * shows a private empty folder, so that only a bind makes it visible there: `$HOME` on most
 * machines, else the checkout (a fresh machine's HOME from `mktemp -d` is under /tmp), else a
 * folder under /var/lib.
 */
export function outsideTmp(): string {
  const temp = [...PRIVATE_IN_SANDBOX, Deno.env.get("TMPDIR")].filter((d) => d !== undefined);
  for (const dir of [Deno.env.get("HOME"), REPO_ROOT]) {
    if (!dir) continue;
    const real = Deno.realPathSync(dir);
    const inside = (parent: string) => {
      const rel = relative(parent, real);
      return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
    };
    if (!temp.some(inside)) return real;
  }
  // Both under /tmp (a fresh machine's HOME, a clone in `mktemp -d`): a folder of the system's.
  const fallback = "/var/lib/deft-test-places";
  try {
    Deno.mkdirSync(fallback, { recursive: true });
    return Deno.realPathSync(fallback);
  } catch {
    throw new Error(
      `these tests need $HOME, the checkout or ${fallback} to be outside /tmp and writable`,
    );
  }
}

/** What a finished process left behind. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** A folder outside `$TMPDIR` holding a fake home, a temp folder, a cache and the bundle. */
export class Place {
  private constructor(
    /** The folder holding everything (a real path). */
    readonly root: string,
  ) {}

  /** The fake `$HOME`. */
  get home(): string {
    return join(this.root, "home");
  }
  /** The `$TMPDIR` Deft runs with: not the test's own. */
  get tmp(): string {
    return join(this.root, "tmp");
  }
  /** `$DEFT_CACHE_DIR`. */
  get cache(): string {
    return join(this.root, "cache");
  }
  /** The bundle (built once per test process, outside `$TMPDIR` too). */
  readonly bundlePath = "";

  /** Makes a place under `outsideTmp()` (never under `$TMPDIR`), with the bundle unless not. */
  static async create(options: { bundle?: boolean } = {}): Promise<Place> {
    const root = await tempDirUntilExit(".deft-places-", { dir: outsideTmp() });
    const place = new Place(root);
    if (options.bundle !== false) {
      (place as { bundlePath: string }).bundlePath = await sharedBundle();
    }
    for (const dir of [place.home, place.tmp, place.cache]) {
      await Deno.mkdir(dir, { recursive: true });
    }
    return place;
  }

  /** A new workspace folder `name` (may hold spaces and non-ASCII) in the fake home. */
  async workspace(name: string, files: Record<string, string> = {}): Promise<string> {
    const dir = join(this.home, name);
    await Deno.mkdir(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) {
      await Deno.mkdir(join(dir, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir, file), text);
    }
    return await Deno.realPath(dir);
  }

  /** The environment Deft runs with here: the fake home, temp and cache, a plain PATH. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: "/usr/local/bin:/usr/bin:/bin",
      HOME: this.home,
      TMPDIR: this.tmp,
      DEFT_CACHE_DIR: this.cache,
      NO_COLOR: "1",
      ...extra,
    };
  }

  /** Runs the bundle with exactly `flags` as its permissions, from the fake home. */
  async runBundle(
    flags: string[],
    args: string[],
    options: { env?: Record<string, string>; stdin?: string } = {},
  ): Promise<Ran> {
    const bundle = this.bundlePath;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...BASE_FLAGS, ...flags, bundle, ...args],
      cwd: this.home,
      clearEnv: true,
      env: this.env(options.env),
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    if (options.stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(options.stdin));
      await writer.close();
    }
    const out = await child.output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  }

  /**
   * The minimal flags README documents for tools on one workspace, with `--allow-env` so that
   * `TMPDIR` and `DEFT_CACHE_DIR` point into this place.
   */
  toolFlags(workspace: string): string[] {
    const own = [workspace, this.tmp, this.cache].join(",");
    return [
      `--allow-read=${own},${this.bundlePath}`,
      `--allow-write=${own}`,
      "--allow-run=bash",
      "--allow-env",
    ];
  }

  /** Removes the place. */
  async remove(): Promise<void> {
    await Deno.remove(this.root, { recursive: true }).catch(() => {});
  }
}

/** One `deft serve` result line. */
export interface Served {
  success: boolean;
  output: string;
  error: string;
}

/** Runs `calls` ([name, args]) through one `deft serve` of the bundle; one result per call. */
export async function serveCalls(
  place: Place,
  flags: string[],
  workspace: string,
  calls: [string, unknown][],
  extra: string[] = [],
): Promise<Served[]> {
  const stdin = calls.map(([name, args]) => JSON.stringify({ name, arguments: args }) + "\n")
    .join("");
  const ran = await place.runBundle(flags, ["serve", "-w", workspace, ...extra], { stdin });
  const lines = ran.stdout.split("\n").filter((l) => l.trim() !== "");
  if (lines.length !== calls.length) {
    throw new Error(`deft serve answered ${lines.length} of ${calls.length} calls: ${ran.stderr}`);
  }
  return lines.map((l) => JSON.parse(l));
}

/** A writable folder under `/srv` for a workspace there, or undefined when `/srv` is not ours. */
export async function srvWorkspace(): Promise<string | undefined> {
  try {
    await Deno.mkdir("/srv", { recursive: true });
    return await tempDirUntilExit("deft-ws ", { dir: "/srv" });
  } catch {
    return undefined;
  }
}

/** The JSON result `deft tool` printed. */
export function toolResult(ran: Ran): { success: boolean; output: string; error: string } {
  try {
    return JSON.parse(ran.stdout);
  } catch {
    throw new Error(`deft tool printed no JSON (exit ${ran.code}): ${ran.stdout}\n${ran.stderr}`);
  }
}

let built: Promise<string> | undefined;

/** `deno task bundle` output in a folder under `outsideTmp()`, removed when the test ends. */
function sharedBundle(): Promise<string> {
  built ??= (async () => {
    const dir = await tempDirUntilExit(".deft-bundle-", { dir: outsideTmp() });
    const path = join(dir, "deft.js");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "scripts/bundle.ts", path],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
    return path;
  })();
  return built;
}
