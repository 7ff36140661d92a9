/**
 * Collects one stream of one command: decodes UTF-8 leniently, strips escape sequences, counts
 * characters and lines, and keeps memory bounded. Small outputs stay in memory; a large one is
 * spilled to its file as it arrives, keeping only its head and tail in memory. When the text is
 * longer than the limit, the file is kept and the model sees head + tail (see `clip.ts`).
 */
import { AnsiStripper } from "./ansi.ts";
import { clipOutput, countNewlines } from "./clip.ts";

/** How one stream is captured. */
export interface CaptureOptions {
  /** `stdout` or `stderr`, for the clipping marker. */
  label: string;
  /** Characters shown before the text is clipped to head + tail. */
  limit: number;
  /** Where the full text goes when it is longer than `limit`. Created only then. */
  savePath: string;
  /** Characters kept in memory before spilling to `savePath` (default 4,000,000). */
  spillChars?: number;
  /** Bytes written to `savePath` at most; the rest is only counted (default 256 MiB). */
  maxSavedBytes?: number;
}

/** The text to show for one stream, and the file with the full text when it was clipped. */
export interface CapturedOutput {
  text: string;
  /** Set when the text was clipped. */
  savedPath: string | null;
  totalChars: number;
  totalNewlines: number;
}

const DEFAULT_SPILL_CHARS = 4_000_000;
const encoder = new TextEncoder();
const DEFAULT_MAX_SAVED_BYTES = 256 * 1024 * 1024;

/** Captures one stream; `write` raw bytes as they arrive, then `finish` once. */
export class OutputCapture {
  readonly #options: Required<CaptureOptions>;
  // Made on the first bytes: most commands print nothing to one stream or the other.
  #text: { decoder: TextDecoder; stripper: AnsiStripper } | null = null;
  #pieces: string[] = [];
  #head = "";
  #tail: string[] = [];
  #tailChars = 0;
  #chars = 0;
  #newlines = 0;
  #file: Deno.FsFile | null = null;
  #savedBytes = 0;
  #savedComplete = true;
  #finished = false;

  constructor(options: CaptureOptions) {
    this.#options = {
      spillChars: DEFAULT_SPILL_CHARS,
      maxSavedBytes: DEFAULT_MAX_SAVED_BYTES,
      ...options,
    };
  }

  /** Characters captured so far. */
  get chars(): number {
    return this.#chars;
  }

  /** Adds raw bytes. Await the result: it applies back-pressure while spilling to disk. */
  write(bytes: Uint8Array): Promise<void> | void {
    this.#text ??= {
      decoder: new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }),
      stripper: new AnsiStripper(),
    };
    const { decoder, stripper } = this.#text;
    return this.#add(stripper.push(decoder.decode(bytes, { stream: true })));
  }

  /** Ends the capture and returns what to show. Closes the spill file. */
  async finish(): Promise<CapturedOutput> {
    if (this.#finished) throw new Error("OutputCapture.finish called twice");
    this.#finished = true;
    if (this.#text) {
      const { decoder, stripper } = this.#text;
      await this.#add(stripper.push(decoder.decode()) + stripper.flush());
    }
    const { limit, savePath, label } = this.#options;
    try {
      if (this.#chars <= limit) {
        return {
          text: this.#pieces.join(""),
          savedPath: null,
          totalChars: this.#chars,
          totalNewlines: this.#newlines,
        };
      }
      if (!this.#file) await this.#spill();
      const text = clipOutput({
        label,
        head: this.#head,
        tail: this.#tail.join(""),
        totalChars: this.#chars,
        totalNewlines: this.#newlines,
        savedPath: savePath,
        savedComplete: this.#savedComplete,
        savedBytes: this.#savedBytes,
      }, limit);
      return { text, savedPath: savePath, totalChars: this.#chars, totalNewlines: this.#newlines };
    } finally {
      this.#file?.close();
      this.#file = null;
      this.#pieces = [];
    }
  }

  /** Closes the spill file without producing a result (the command's session went away). */
  discard(): void {
    this.#finished = true;
    this.#file?.close();
    this.#file = null;
    this.#pieces = [];
  }

  #add(text: string): Promise<void> | void {
    if (text === "") return;
    const { limit, spillChars } = this.#options;
    this.#chars += text.length;
    this.#newlines += countNewlines(text);
    if (this.#head.length < limit) this.#head += text.slice(0, limit - this.#head.length);
    this.#tail.push(text);
    this.#tailChars += text.length;
    while (this.#tailChars - this.#tail[0].length >= limit) {
      this.#tailChars -= this.#tail.shift()!.length;
    }
    // Many tiny reads (a slow writer) would make the shifts above quadratic.
    if (this.#tail.length > 256) this.#tail = [this.#tail.join("")];
    if (this.#file) return this.#save(text);
    this.#pieces.push(text);
    if (this.#chars > spillChars) return this.#spill();
  }

  async #spill(): Promise<void> {
    this.#file = await Deno.open(this.#options.savePath, {
      write: true,
      create: true,
      truncate: true,
    });
    const pieces = this.#pieces;
    this.#pieces = [];
    for (const piece of pieces) await this.#save(piece);
  }

  async #save(text: string): Promise<void> {
    if (!this.#savedComplete || !this.#file) return;
    let bytes = encoder.encode(text);
    const room = this.#options.maxSavedBytes - this.#savedBytes;
    if (bytes.length > room) {
      bytes = bytes.subarray(0, room);
      this.#savedComplete = false;
    }
    for (let offset = 0; offset < bytes.length;) {
      offset += await this.#file.write(bytes.subarray(offset));
    }
    this.#savedBytes += bytes.length;
  }
}
