/**
 * Edits of a file whose encoding detection is unsure of (a short GBK file may also read as EUC-KR
 * or Windows-1251). Such an edit is made without `encoding` only when it is the same edit under
 * every reading detection offers: the same bytes found, replaced by the same bytes. Then no
 * reading can be damaged by it, whichever is right. A plain ASCII change to the ASCII part of the
 * file is such an edit; a change to its non-ASCII text, new text whose bytes differ between the
 * readings, or a match that one reading sees inside a two-byte character is not, and waits for
 * the caller to state the encoding, as before.
 */
import { FileToolError } from "../fs/errors.ts";
import type { Splice } from "./splice.ts";
import { describeUncertain, type TextFile, uncertainError } from "./text_file.ts";
import { type Encoding, roundTripMismatch } from "./transcode.ts";

/**
 * Runs `plan` on `file` as read, and, when its encoding is uncertain, again under each other
 * reading the whole file decodes in exactly; returns the plan when every splice is the same.
 * Otherwise (or when `plan` fails under a reading) throws the refusal that asks for `encoding`.
 */
export function planUnderEveryReading<P extends { splice: Splice }>(
  file: TextFile,
  plan: (file: TextFile) => P,
): P {
  const uncertain = file.encoding.uncertain;
  if (!uncertain) return plan(file);
  const refusal = () => uncertainError(file.shown, file.encoding, DIFFERS);
  const chosen = planOrRefuse(file, plan, () => uncertainError(file.shown, file.encoding));
  for (const name of uncertain.alternatives) {
    // Bytes that do not survive decoding and encoding in an encoding are not text in it.
    if (roundTripMismatch(file.bytes, name) >= 0) continue;
    const other = planOrRefuse({ ...file, encoding: { name, bomLength: 0 } }, plan, refusal);
    if (!sameSplice(chosen.splice, other.splice)) throw refusal();
  }
  return chosen;
}

/** The note ending the result of an edit made in a file of uncertain encoding. */
export function uncertainEditNote(encoding: Encoding): string {
  if (!encoding.uncertain) return "";
  return `\n<NOTE>The encoding of this file is uncertain: ${describeUncertain(encoding)}. This ` +
    `edit writes the same bytes under each of these readings, so it was made; the snippet is ` +
    `shown as ${encoding.name}. Edits whose bytes depend on the reading need \`encoding\` ` +
    `stated.</NOTE>`;
}

const DIFFERS = "this edit is not the same bytes under each of those readings, so in the wrong " +
  "one it would damage the file";

function planOrRefuse<P>(
  file: TextFile,
  plan: (file: TextFile) => P,
  refusal: () => FileToolError,
): P {
  try {
    return plan(file);
  } catch (e) {
    // No match, several, or a character one reading lacks: the readings do not agree.
    if (e instanceof FileToolError) throw refusal();
    throw e;
  }
}

function sameSplice(a: Splice, b: Splice): boolean {
  return a.start === b.start && a.end === b.end && a.insert.length === b.insert.length &&
    a.insert.every((byte, i) => byte === b.insert[i]);
}
