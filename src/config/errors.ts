/** The configuration's own error, apart from the loader so every config module can raise it. */
import { UsageError } from "../errors.ts";

/** A configuration mistake; the CLI prints it and exits with code 2. */
export class ConfigError extends UsageError {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}
