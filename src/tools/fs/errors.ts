/** The failure type shared by the file tools. */

/**
 * An expected failure of a file tool (bad argument, missing file, no match, ...). Its message is
 * written for the model and is returned to it as the tool's error, unchanged.
 */
export class FileToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FileToolError";
  }
}
