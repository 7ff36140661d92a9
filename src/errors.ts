/** Errors that every layer may raise and the CLI maps to exit codes. */

/** A mistake in how Deft was called or configured; the CLI prints it and exits with code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
