/** The size limit both editors apply before reading a file whole. */

/** The default of `ToolSettings.maxFileBytes`: 10 MB. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** `bytes` as a short human figure, e.g. `20.0 MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
