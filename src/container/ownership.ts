/**
 * Proof that a container or image is this Deft install's, and whether the run that made it is
 * over: what the leftover sweep removes, and only that.
 *
 * Labels alone prove nothing (anyone who can start a container can copy them), and a pid proves
 * nothing across PID namespaces. So each install keeps a secret (random, in a 0600 file under
 * Deft's cache folder), and everything Deft starts or builds carries its run's id and an HMAC,
 * under that secret, of its own name and that id. Each run holds an exclusive lock (flock) on a
 * file named by its id for as long as it lives; the lock goes with the process, however it ends.
 * A leftover is this install's when its HMAC checks, and its run is over when that lock is free.
 */
import { deftCacheDir } from "../policy/dirs.ts";

/** The labels that carry the proof (containers; an image's get `image.` after `deft.`). */
export const RUN_LABEL = "deft.run";
export const PROOF_LABEL = "deft.proof";
export const IMAGE_RUN_LABEL = "deft.image.run";
export const IMAGE_PROOF_LABEL = "deft.image.proof";

/** What one run of Deft stamps on what it makes. */
export interface RunStamp {
  /** The run's id (hex), named by its lock file. */
  run: string;
  /** The HMAC of `kind:name:run` under the install's secret (hex). */
  proof(kind: "container" | "image", name: string): Promise<string>;
}

function ownershipDir(): string {
  return `${deftCacheDir()}/containers`;
}

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

let secretKey: Promise<CryptoKey> | undefined;

/** The install's secret as an HMAC key: read, or made (0600) on first use. */
function installKey(): Promise<CryptoKey> {
  secretKey ??= (async () => {
    const dir = ownershipDir();
    await Deno.mkdir(`${dir}/runs`, { recursive: true, mode: 0o700 });
    const path = `${dir}/secret`;
    try {
      await Deno.writeTextFile(path, hex(crypto.getRandomValues(new Uint8Array(32))), {
        createNew: true,
        mode: 0o600,
      });
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
    const secret = (await Deno.readTextFile(path)).trim();
    if (!/^[0-9a-f]{64}$/.test(secret)) {
      throw new Error(`${path} is not Deft's container secret (64 hex digits)`);
    }
    return await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
  })();
  return secretKey;
}

async function hmac(kind: string, name: string, run: string): Promise<string> {
  const key = await installKey();
  const signed = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(`${kind}:${name}:${run}`),
  );
  return hex(new Uint8Array(signed));
}

let stamp: Promise<RunStamp | undefined> | undefined;
/** The lock file this process holds for its whole life (never closed: the lock ends with it). */
let held: Deno.FsFile | undefined;

/**
 * This process's stamp: its run id, its lock taken. Undefined when Deft's cache folder cannot be
 * written (then nothing Deft makes can be proven its own, and no sweep removes it).
 */
export function runStamp(): Promise<RunStamp | undefined> {
  stamp ??= (async () => {
    try {
      await installKey();
      const run = hex(crypto.getRandomValues(new Uint8Array(16)));
      const file = await Deno.open(`${ownershipDir()}/runs/${run}.lock`, {
        create: true,
        write: true,
        mode: 0o600,
      });
      await file.lock(true);
      held = file;
      return { run, proof: (kind, name) => hmac(kind, name, run) };
    } catch {
      return undefined;
    }
  })();
  return stamp;
}

/** The labels that stamp `name` (a container's name, or an image's tag) as this run's. */
export async function stampLabels(
  kind: "container" | "image",
  name: string,
): Promise<Record<string, string>> {
  const mine = await runStamp();
  if (!mine) return {};
  const proof = await mine.proof(kind, name);
  return kind === "container"
    ? { [RUN_LABEL]: mine.run, [PROOF_LABEL]: proof }
    : { [IMAGE_RUN_LABEL]: mine.run, [IMAGE_PROOF_LABEL]: proof };
}

/**
 * True when `labels` prove that this install made `name` (a container's name, an image's tag)
 * in a run that is over: the HMAC checks, and no live process holds the run's lock.
 */
export async function provenLeftover(
  kind: "container" | "image",
  name: string,
  labels: Record<string, string>,
): Promise<boolean> {
  const run = labels[kind === "container" ? RUN_LABEL : IMAGE_RUN_LABEL];
  const proof = labels[kind === "container" ? PROOF_LABEL : IMAGE_PROOF_LABEL];
  if (!run || !proof || !/^[0-9a-f]{32}$/.test(run)) return false;
  const mine = await runStamp();
  if (!mine || run === mine.run) return false;
  let expected: string;
  try {
    expected = await hmac(kind, name, run);
  } catch {
    return false;
  }
  if (expected !== proof) return false;
  return await runOver(run);
}

/** True when no process holds run `run`'s lock (its file gone: the run ended and cleaned up). */
async function runOver(run: string): Promise<boolean> {
  const path = `${ownershipDir()}/runs/${run}.lock`;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { write: true });
  } catch (e) {
    return e instanceof Deno.errors.NotFound;
  }
  try {
    return await file.tryLock(true);
  } catch {
    return false;
  } finally {
    file.close();
  }
}

/** Forgets run `run`'s lock file once nothing of it is left (called by the sweep). */
export async function forgetRun(run: string): Promise<void> {
  if (!/^[0-9a-f]{32}$/.test(run)) return;
  await Deno.remove(`${ownershipDir()}/runs/${run}.lock`).catch(() => {});
}

/** How old a free lock file must be before the sweep deletes it (a run locks its file at once). */
const STALE_LOCK_MS = 10 * 60_000;

/**
 * Deletes the lock files of runs that are over (free, and older than a starting run could leave
 * one unlocked). What such a run left is still proven by its HMAC: a missing file means over.
 */
export async function pruneRuns(): Promise<void> {
  if (!held) return;
  const dir = `${ownershipDir()}/runs`;
  try {
    for await (const entry of Deno.readDir(dir)) {
      const run = /^([0-9a-f]{32})\.lock$/.exec(entry.name)?.[1];
      if (!run || !entry.isFile) continue;
      const info = await Deno.lstat(`${dir}/${entry.name}`).catch(() => undefined);
      if (!info?.mtime || Date.now() - info.mtime.getTime() < STALE_LOCK_MS) continue;
      if (await runOver(run)) await forgetRun(run);
    }
  } catch {
    // No folder, or unreadable: nothing to prune.
  }
}
