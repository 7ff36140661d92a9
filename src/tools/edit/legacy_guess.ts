/**
 * Guessing the legacy encoding of a file that is neither UTF-8 nor UTF-16: npm:jschardet ranks
 * encodings on a sample of the file, and a guess is taken only when the whole file decodes in it
 * and encodes back to the same bytes. Too little evidence, or a close rival that reads the bytes
 * differently, makes the guess uncertain rather than silently wrong.
 */
import type { Codecs } from "./codecs.ts";
import {
  decode,
  DecodeError,
  type Encoding,
  type EncodingName,
  roundTripMismatch,
} from "./transcode.ts";

// Below this confidence a guess of the detector is only a guess.
const MIN_CONFIDENCE = 0.1;
// A differently decoding guess this close to the best one makes the best one uncertain.
const RIVAL_SHARE = 0.75;

// What the detector's labels may be read as, in order of preference. Only stateless encodings
// that the editor can splice byte for byte are guessed; others can still be stated by the caller.
const GUESSABLE: Record<string, readonly EncodingName[]> = {
  "gb18030": ["gbk", "gb18030"],
  "gb2312": ["gbk", "gb18030"],
  "big5": ["big5"],
  "shift_jis": ["shift_jis", "cp932"],
  "cp932": ["shift_jis", "cp932"],
  "euc-jp": ["euc-jp"],
  "euc-kr": ["euc-kr"],
  "cp949": ["euc-kr", "cp949"],
  "koi8-r": ["koi8-r"],
  "koi8-u": ["koi8-u"],
  "iso-8859-1": ["windows-1252", "iso-8859-1"],
  "iso-8859-15": ["windows-1252", "iso-8859-15"],
  ...Object.fromEntries(
    [1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258].map((n) => [
      `windows-${n}`,
      [`windows-${n}`],
    ]),
  ),
  ...Object.fromEntries(
    [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 16].map((n) => [`iso-8859-${n}`, [`iso-8859-${n}`]]),
  ),
};

interface Candidate {
  name: EncodingName;
  confidence: number;
  text: string;
}

// Fewer non-ASCII bytes than this are too little to tell encodings apart with confidence.
const MIN_EVIDENCE = 8;

// Bytes of a file the detector looks at most: lines with non-ASCII bytes from all over the file.
const SAMPLE_BYTES = 64 * 1024;

/** The encoding `bytes` (not UTF-8, not UTF-16) are most likely in; see the module doc. */
export function guessLegacy(bytes: Uint8Array, lib: Codecs): Encoding {
  // The detector guesses from a sample; a guess is taken only once the whole file decodes in it
  // and encodes back to the same bytes.
  const sample = detectionSample(bytes);
  const candidates: Candidate[] = [];
  const seen = new Set<string>();
  for (const guess of lib.guesses(sample)) {
    for (const name of GUESSABLE[guess.encoding.toLowerCase()] ?? []) {
      if (seen.has(name)) break;
      if (roundTripMismatch(sample, name) >= 0) continue;
      const text = decode(sample, name);
      // C1 control characters in the decoded text: the bytes mean something else.
      if (/[\u0080-\u009f]/.test(text)) continue;
      seen.add(name);
      candidates.push({ name, confidence: guess.confidence, text });
      break;
    }
  }
  const wholeFits = (name: EncodingName) => sample === bytes || roundTripMismatch(bytes, name) < 0;
  const cp1252 = roundTripMismatch(bytes, "windows-1252") < 0;
  let evidence = 0;
  for (const b of sample) if (b >= 0x80) evidence++;
  const latin = cp1252 && looksLatin(decode(sample, "windows-1252"), evidence >= MIN_EVIDENCE);
  const isLatin = (c: Candidate) => c.name === "windows-1252" || c.name.startsWith("iso-8859-1");
  for (let top = candidates[0]; top; top = candidates[0]) {
    if (top.confidence < MIN_CONFIDENCE || isLatin(top)) break;
    if (!wholeFits(top.name)) {
      candidates.shift();
      continue;
    }
    // With only a few non-ASCII bytes, any guess that reads them differently is a rival.
    const share = evidence < MIN_EVIDENCE ? 0 : RIVAL_SHARE;
    const rivals = candidates.filter((c) =>
      c !== top && c.confidence >= top.confidence * share && c.text !== top.text
    ).slice(0, 4);
    if (
      evidence < MIN_EVIDENCE && cp1252 && top.text !== decode(sample, "windows-1252") &&
      !rivals.some((c) => c.name === "windows-1252")
    ) {
      rivals.push({ name: "windows-1252", confidence: 0, text: "" });
    }
    if (rivals.length === 0) return { name: top.name, bomLength: 0 };
    return { name: top.name, bomLength: 0, uncertain: { alternatives: rivals.map((c) => c.name) } };
  }
  if (latin) return { name: "windows-1252", bomLength: 0 };
  const best = candidates.find((c) => wholeFits(c.name));
  if (!best && !cp1252) {
    throw new DecodeError(
      "it is neither UTF-8 nor text in a legacy encoding the editor could decode exactly; if " +
        "you know its encoding, state it with the `encoding` parameter",
    );
  }
  const name = best?.name ?? "windows-1252";
  const alternatives = candidates.filter((c) => c.name !== name).slice(0, 3).map((c) => c.name);
  if (name !== "windows-1252" && cp1252 && !alternatives.includes("windows-1252")) {
    alternatives.push("windows-1252");
  }
  return { name, bomLength: 0, uncertain: { alternatives } };
}

// The lines of `bytes` that hold non-ASCII bytes, spread evenly over the file, at most
// `SAMPLE_BYTES` in all. Lines start after a line feed and are cut only after an ASCII byte, so
// no character of an ASCII-compatible encoding is split (their lead bytes are all >= 0x80).
function detectionSample(bytes: Uint8Array): Uint8Array {
  if (bytes.length <= SAMPLE_BYTES) return bytes;
  const lines: [number, number][] = [];
  let total = 0;
  for (let start = 0; start < bytes.length;) {
    const nl = bytes.indexOf(10, start);
    const end = nl === -1 ? bytes.length : nl + 1;
    let high = false;
    for (let i = start; i < end; i++) {
      if (bytes[i] >= 0x80) {
        high = true;
        break;
      }
    }
    if (high) {
      lines.push([start, end]);
      total += end - start;
    }
    start = end;
  }
  const stride = Math.max(1, Math.ceil(total / SAMPLE_BYTES));
  const out = new Uint8Array(SAMPLE_BYTES);
  let used = 0;
  for (let i = 0; i < lines.length && used < SAMPLE_BYTES; i += stride) {
    let [start, end] = lines[i];
    if (end - start > SAMPLE_BYTES - used) {
      end = start + SAMPLE_BYTES - used;
      while (end > start && bytes[end - 1] >= 0x80) end--;
    }
    out.set(bytes.subarray(start, end), used);
    used += end - start;
  }
  return out.subarray(0, used);
}

// True when `text` (a Windows-1252 reading) reads like Latin-script text: every word with an
// accented letter also has a plain ASCII letter or is one letter long. Cyrillic or CJK bytes read
// as Windows-1252 give words made only of accented letters ("äà" for the Russian "да").
function looksLatin(text: string, muchText: boolean): boolean {
  // Rare in Western text, common in other encodings read as Windows-1252 ("Łódź" gives "£ódŸ").
  if (!muchText && /[ŠšŽžŸ¤¦¨´¸¹²³¼½¾ƒˆ˜‰‹›]/.test(text)) return false;
  for (const [word] of text.matchAll(/\p{L}+/gu)) {
    if (word.length < 2 || /^[A-Za-z]+$/.test(word)) continue;
    if (!/[A-Za-z]/.test(word)) return false;
  }
  return true;
}
