/**
 * `@path` mentions at the interactive prompt: the named file's content goes with the prompt,
 * attached and marked as such. Only what the editor could read is read, where the tools act (the
 * session's workplace, src/agent/workplace.ts, judges and reads it): a regular file inside the
 * workspace, never a FIFO or a device, bounded; its encoding is found as the editor finds it; its
 * text is masked like every tool output. A path outside the workspace, a special file, a binary
 * or a too large file is refused with a message. Tab completes a mention over the workspace's
 * files (the workplace's `listFiles`).
 */
import { detectEncoding } from "../../tools/edit/encoding.ts";
import { loadCodecs } from "../../tools/edit/codecs.ts";
import { binaryReason } from "../../tools/edit/binary.ts";
import { maskOutput } from "../../policy/secrets.ts";
import { OwnFileError, readOwnFile } from "../../policy/own_file.ts";
import type { LLMImage } from "../../llm/types.ts";
import type { Workplace } from "../../agent/workplace.ts";

/** Largest file attached (bytes). */
export const MENTION_MAX_BYTES = 256 * 1024;
/** Largest image attached (bytes): the smallest of the providers' limits. */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;

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

/**
 * Reads the file a mention names (relative to the workspace, or absolute inside it) where the
 * session's tools act, bounded by the attachment limits; then decodes it (fromBytes).
 */
export async function readMention(
  place: Pick<Workplace, "readFile">,
  path: string,
): Promise<Mention> {
  const read = await place.readFile(path, imageName(path) ? IMAGE_MAX_BYTES : MENTION_MAX_BYTES);
  return "refused" in read ? { path, refused: read.refused } : await fromBytes(path, read.bytes);
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
