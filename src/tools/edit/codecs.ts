/**
 * The codec and detector libraries for legacy encodings (npm:iconv-lite, npm:jschardet), loaded
 * only when a file that is not UTF-8 turns up, so start-up and UTF-8 edits never pay for them.
 */

/** One guess of jschardet: an encoding label and a confidence in [0, 1]. */
export interface Guess {
  encoding: string;
  confidence: number;
}

/** The two libraries, as far as the editor uses them. */
export interface Codecs {
  decode(bytes: Uint8Array, encoding: string): string;
  encode(text: string, encoding: string): Uint8Array;
  encodingExists(encoding: string): boolean;
  /** Every guess the detector has for `bytes`, most likely first. */
  guesses(bytes: Uint8Array): Guess[];
}

let loaded: Codecs | undefined;
let loading: Promise<Codecs> | undefined;

/** Loads the libraries once; later calls return the same object. */
export function loadCodecs(): Promise<Codecs> {
  if (loaded) return Promise.resolve(loaded);
  loading ??= (async () => {
    const [{ default: iconv }, { default: jschardet }] = await Promise.all([
      import("iconv-lite"),
      import("jschardet"),
    ]);
    loaded = {
      decode: (bytes, encoding) => iconv.decode(bytes as never, encoding, { stripBOM: false }),
      encode: (text, encoding) => {
        const buffer = iconv.encode(text, encoding, { addBOM: false });
        return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      },
      encodingExists: (encoding) => iconv.encodingExists(encoding),
      guesses: (bytes) => jschardet.detectAll(bytes, { minimumThreshold: 0 }) as Guess[],
    };
    return loaded;
  })();
  return loading;
}

/** The libraries if `loadCodecs` has finished, else undefined. */
export function codecsIfLoaded(): Codecs | undefined {
  return loaded;
}
