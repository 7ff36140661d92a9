/**
 * Text that changes from one run to the next without any change in behaviour: how long
 * something took, temp paths, process ids, memory addresses and timestamps. A replay compares
 * tool output with these replaced by placeholders, so that `Ran 2 tests in 0.003s` and
 * `Ran 2 tests in 0.004s` agree while a different test count does not.
 */

const RULES: [RegExp, string][] = [
  // ISO-8601 and `date`-style timestamps.
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g, "<TIME>"],
  [/\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, "<TIME>"],
  // Durations: `0.003s`, `12 ms`, `1.5 seconds`, `2m3.4s` (a number glued to a time unit).
  [
    /\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|min|minutes?|m(?=\d))\b(?:\d+(?:\.\d+)?s\b)?/g,
    "<DURATION>",
  ],
  // Temp paths: /tmp/…, /var/folders/…, $TMPDIR-style names (the random part varies).
  [/(?:\/private)?\/(?:tmp|var\/folders|var\/tmp)\/[^\s'":,)\]}]*/g, "<TMP>"],
  // Process ids where they are labelled as such.
  [/\b(pid|PID|process)(\s*[:=]?\s*)\d+/g, "$1$2<PID>"],
  // Memory addresses (`<object at 0x7f3a…>`).
  [/\b0x[0-9a-fA-F]{6,}\b/g, "<ADDR>"],
];

/** `text` with volatile parts replaced by placeholders. */
export function normalizeVolatile(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}
