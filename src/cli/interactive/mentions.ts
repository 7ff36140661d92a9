/**
 * `@path` mentions at the interactive prompt: the named file's content goes with the prompt,
 * attached and marked as such. Only what the editor could read is read: a regular file inside the
 * workspace, opened pinned (tools/fs/workspace_read.ts), never a FIFO or a device; its encoding is
 * found as the editor finds it; its text is masked like every tool output, and bounded. A path
 * outside the workspace, a special file, a binary or a too large file is refused with a message.
 * Tab completes a mention over the workspace's files (`git ls-files`, so .gitignore'd files are
 * left out; a plain walk outside git).
 */
import { isAbsolute, join, posix, relative, resolve } from "node:path";
import { readWorkspaceFile } from "../../tools/fs/workspace_read.ts";
import { detectEncoding } from "../../tools/edit/encoding.ts";
import { loadCodecs } from "../../tools/edit/codecs.ts";
import { binaryReason } from "../../tools/edit/binary.ts";
import { maskOutput } from "../../policy/secrets.ts";
import { OwnFileError, readOwnFile } from "../../policy/own_file.ts";
import { isInside } from "../../policy/workspace.ts";
import { runGit } from "../../policy/git.ts";
import type { LLMImage } from "../../llm/types.ts";
import type { Container } from "../../container/container.ts";

/** Largest file attached (bytes). */
export const MENTION_MAX_BYTES = 256 * 1024;
/** Largest image attached (bytes): the smallest of the providers' limits. */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** Most files listed for completion. */
const LIST_LIMIT = 20_000;

/** The `@path` words of `input`, in order, each once. */
export function mentionsIn(input: string): string[] {
  const found = new Set<string>();
  for (const m of input.matchAll(/(?:^|\s)@([^\s@]+)/g)) {
    const path = m[1].replace(/[,.;:!?)]+$/, "");
    if (path !== "") found.add(path);
  }
  return [...found];
}

/** A mention read: its text to attach, or why it was refused. */
export type Mention =
  | { path: string; text: string; lines: number; bytes: number }
  | { path: string; image: LLMImage; bytes: number }
  | { path: string; refused: string };

/** Reads the file a mention names (relative to `workspace`, or absolute inside it). */
export async function readMention(workspace: string, path: string): Promise<Mention> {
  const absolute = isAbsolute(path) ? resolve(path) : resolve(workspace, path);
  let root = workspace;
  try {
    root = Deno.realPathSync(workspace);
  } catch { /* judged as written */ }
  if (!isInside(resolve(workspace), absolute) && !isInside(root, absolute)) {
    return { path, refused: "it is outside the workspace; only the workspace's files attach" };
  }
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(absolute);
  } catch {
    return { path, refused: "there is no such file in the workspace" };
  }
  if (info.isSymlink) {
    try {
      info = await Deno.stat(absolute);
    } catch {
      return { path, refused: "it is a link to nothing" };
    }
  }
  if (info.isDirectory) return { path, refused: "it is a folder; name a file in it" };
  if (!info.isFile) {
    return { path, refused: "it is not a regular file (a FIFO, socket or device is never read)" };
  }
  const limit = imageName(path) ? IMAGE_MAX_BYTES : MENTION_MAX_BYTES;
  if (info.size > limit) {
    return {
      path,
      refused: `it is ${info.size} bytes, over the ${limit}-byte limit for an ` +
        `attachment; ask the model to read the part you need`,
    };
  }
  const bytes = readWorkspaceFile(root, absolute, limit);
  if (bytes === null || bytes === undefined) {
    return {
      path,
      refused: "it could not be read as a regular file inside the workspace (a link leading " +
        "out of it, or a file that changed while it was read)",
    };
  }
  return await fromBytes(path, bytes);
}

/** What a mention's bytes are: an image, text (decoded, masked), or refused as binary. */
async function fromBytes(path: string, bytes: Uint8Array): Promise<Mention> {
  const mediaType = imageType(bytes);
  if (mediaType) {
    return { path, image: { mediaType, base64: encodeBase64(bytes) }, bytes: bytes.length };
  }
  if (imageName(path)) {
    return {
      path,
      refused: "it is not a PNG, JPEG, GIF or WebP image (judged by its first bytes)",
    };
  }
  const binary = binaryReason(bytes, true);
  if (binary) return { path, refused: `it looks binary (${binary})` };
  let text: string;
  try {
    const encoding = await detectEncoding(bytes);
    const body = bytes.subarray(encoding.bomLength);
    text = encoding.name === "utf-8" || encoding.name.startsWith("utf-16")
      ? new TextDecoder(encoding.name).decode(body)
      : (await loadCodecs()).decode(body, encoding.name);
  } catch (e) {
    return { path, refused: `its encoding was not recognised (${(e as Error).message})` };
  }
  text = maskOutput(text);
  const lines = text === "" ? 0 : text.replace(/\n$/, "").split("\n").length;
  return { path, text, lines, bytes: bytes.length };
}

/**
 * Checks and reads a mention's file inside a container, as the container sees its workspace
 * (ours-to-read rules as on the host): the path resolved there (links followed) must be a
 * regular file inside the workspace's real path and within the size limit; only then is it read,
 * at most that many bytes. Exit codes say why not; stdout is the file.
 */
const CONTAINER_READ_SCRIPT = `ws=$(realpath -e -- "$1") || exit 10
case "$2" in /*) p=$2 ;; *) p=$ws/$2 ;; esac
if [ ! -e "$p" ]; then if [ -h "$p" ]; then exit 12; fi; exit 11; fi
r=$(realpath -e -- "$p") || exit 12
case "$r" in "$ws"/*) ;; *) exit 13 ;; esac
if [ -d "$r" ]; then exit 14; fi
if [ ! -f "$r" ]; then exit 15; fi
size=$(stat -c %s -- "$r") || exit 15
if [ "$size" -gt "$3" ]; then echo "$size"; exit 16; fi
exec head -c "$3" -- "$r"`;

/** Why the container's check refused a mention, by the script's exit code. */
const CONTAINER_REFUSALS: Record<number, string> = {
  10: "the container's workspace could not be resolved",
  11: "there is no such file in the container's workspace",
  12: "it is a link to nothing",
  13: "it leads outside the workspace (a link out of it); only the workspace's files attach",
  14: "it is a folder; name a file in it",
  15: "it is not a regular file (a FIFO, socket or device is never read)",
};

/**
 * Reads the file a mention names in a container session: the path is judged against the
 * workspace as the container sees it (`container.workspace`), and the file is checked and read
 * inside the container (never on the host, where that path means another file), with a deadline
 * and bounded output.
 */
export async function readMentionInContainer(container: Container, path: string): Promise<Mention> {
  const workspace = container.workspace;
  const absolute = posix.isAbsolute(path) ? posix.resolve(path) : posix.resolve(workspace, path);
  if (!isInside(posix.resolve(workspace), absolute)) {
    return { path, refused: "it is outside the workspace; only the workspace's files attach" };
  }
  const limit = imageName(path) ? IMAGE_MAX_BYTES : MENTION_MAX_BYTES;
  const [{ containerExecLaunch }, { runLimited }] = await Promise.all([
    import("../../policy/process.ts"),
    import("../../policy/git.ts"),
  ]);
  let result;
  try {
    result = await runLimited(
      containerExecLaunch(container.cli, container.id, {
        argv: ["sh", "-c", CONTAINER_READ_SCRIPT, "sh", workspace, absolute, String(limit)],
      }),
      `reading @${path} (in the container)`,
      undefined,
      { timeoutMs: 10_000, maxOutputBytes: limit + 64 },
    );
  } catch (e) {
    return { path, refused: `it could not be read in the container (${(e as Error).message})` };
  }
  if (result.code === 16) {
    return {
      path,
      refused: `it is ${result.out.trim()} bytes, over the ${limit}-byte limit for an ` +
        `attachment; ask the model to read the part you need`,
    };
  }
  if (!result.ok) {
    const why = CONTAINER_REFUSALS[result.code];
    return {
      path,
      refused: why ?? `it could not be read in the container (exit ${result.code}: ` +
          `${result.err.trim().slice(0, 200)})`,
    };
  }
  return await fromBytes(path, result.bytes);
}

function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function imageName(path: string): boolean {
  return /\.(png|jpe?g|gif|webp)$/i.test(path);
}

/** The image type `bytes` start with (PNG, JPEG, GIF, WebP), else undefined. */
export function imageType(bytes: Uint8Array): LLMImage["mediaType"] | undefined {
  const starts = (...b: number[]) => b.every((x, i) => bytes[i] === x);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && String.fromCharCode(...bytes.subarray(8, 12)) === "WEBP") {
    return "image/webp";
  }
  return undefined;
}

/**
 * The image at `path` (`--image FILE`: the user's own file, anywhere), checked: a regular file
 * (never a FIFO or device), at most IMAGE_MAX_BYTES, a PNG, JPEG, GIF or WebP by its first bytes.
 * Throws an Error saying what is wrong.
 */
export async function readImageFile(path: string): Promise<LLMImage> {
  let bytes: Uint8Array;
  try {
    // Read as Deft's own files are: a FIFO or device (also one swapped in meanwhile) is refused
    // unopened or unwaited, and a file growing past the limit is not read on.
    ({ bytes } = await readOwnFile(path, { limit: IMAGE_MAX_BYTES, what: "an image" }));
  } catch (e) {
    if (e instanceof OwnFileError) throw new Error(`--image ${e.message}`);
    throw new Error(`--image ${path}: cannot read it (${(e as Error).message})`);
  }
  const mediaType = imageType(bytes);
  if (!mediaType) {
    throw new Error(
      `--image ${path}: not a PNG, JPEG, GIF or WebP image (judged by its first bytes)`,
    );
  }
  return { mediaType, base64: encodeBase64(bytes) };
}

/** Providers whose models Deft sends images to. */
const IMAGE_PROVIDERS = new Set(["openai", "openai_compatible", "azure", "anthropic", "google"]);

/** Why `provider` cannot take the images, or null when it can. */
export function imageRefusal(provider: string): string | null {
  return IMAGE_PROVIDERS.has(provider) ? null : `provider '${provider}' does not take image ` +
    `input in Deft (images go to OpenAI, Anthropic and Google models); nothing was sent`;
}

/** The prompt with the attached files after it, each marked as attached by the user. */
export function withAttachments(prompt: string, attached: Mention[]): string {
  const files = attached.flatMap((m) =>
    "text" in m
      ? [`<attached-file path="${m.path}">\n${m.text.replace(/\n?$/, "\n")}</attached-file>`]
      : []
  );
  return files.length === 0 ? prompt : `${prompt}\n\n${files.join("\n\n")}`;
}

/** The workspace's files for completion (relative paths), .gitignore respected under git. */
export async function workspaceFiles(workspace: string): Promise<string[]> {
  try {
    const listed = await runGit(
      workspace,
      ["ls-files", "--cached", "--others", "--exclude-standard", "-z"],
      { limits: { timeoutMs: 5000, maxOutputBytes: 8 * 1024 * 1024 } },
    );
    if (listed.ok) {
      return new TextDecoder().decode(listed.bytes).split("\0").filter((p) => p !== "")
        .slice(0, LIST_LIMIT);
    }
  } catch { /* no git: walk */ }
  const files: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (files.length >= LIST_LIMIT || depth > 12) return;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const full = join(dir, e.name);
      if (e.isDirectory) walk(full, depth + 1);
      else if (e.isFile) files.push(relative(workspace, full));
    }
  };
  walk(workspace, 0);
  return files;
}

/**
 * The container workspace's files for completion: `git ls-files` run inside (hardened, bounded);
 * none outside a repository there.
 */
export async function containerWorkspaceFiles(container: Container): Promise<string[]> {
  try {
    const { containerPlace } = await import("../../container/patch.ts");
    const listed = await containerPlace(container, {
      timeoutMs: 5000,
      maxOutputBytes: 8 * 1024 * 1024,
    }).git(["ls-files", "--cached", "--others", "--exclude-standard", "-z"]);
    if (!listed.ok) return [];
    return new TextDecoder().decode(listed.bytes).split("\0").filter((p) => p !== "")
      .slice(0, LIST_LIMIT);
  } catch {
    return [];
  }
}

/**
 * Completions of the `@` word at the end of `line`: node:readline's completer answer (the
 * candidates, and the text they replace), or none when the line does not end in a mention.
 * Folders complete one level at a time, as a shell does.
 */
export function completeMention(line: string, files: readonly string[]): [string[], string] {
  const m = /(?:^|\s)@([^\s@]*)$/.exec(line);
  if (!m) return [[], line];
  const prefix = m[1];
  const seen = new Set<string>();
  for (const file of files) {
    if (!file.startsWith(prefix)) continue;
    const slash = file.indexOf("/", prefix.length);
    seen.add(`@${slash < 0 ? file : file.slice(0, slash + 1)}`);
    if (seen.size >= 200) break;
  }
  return [[...seen].sort(), `@${prefix}`];
}
