/**
 * Colour for the console: on when stderr is a terminal and `NO_COLOR` is unset, or when
 * `--color always` asks for it; `--color never` and `NO_COLOR` (https://no-color.org) turn it off.
 */
import { readEnv } from "../../env.ts";

/** The `--color` flag's values. */
export type ColorMode = "auto" | "always" | "never";

/** The `--color` choices, for the command line. */
export const COLOR_MODES: readonly ColorMode[] = ["auto", "always", "never"];

/** Whether to colour output written to a stream that `isTerminal` describes. */
export function useColor(mode: ColorMode | undefined, isTerminal: boolean): boolean {
  if (mode === "always") return true;
  if (mode === "never") return false;
  return isTerminal && !readEnv("NO_COLOR");
}

/** ANSI styles that do nothing when colour is off. */
export class Style {
  constructor(readonly enabled: boolean) {}

  #sgr(open: number, close: number, text: string): string {
    return this.enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  }

  bold(text: string): string {
    return this.#sgr(1, 22, text);
  }
  dim(text: string): string {
    return this.#sgr(2, 22, text);
  }
  red(text: string): string {
    return this.#sgr(31, 39, text);
  }
  green(text: string): string {
    return this.#sgr(32, 39, text);
  }
  yellow(text: string): string {
    return this.#sgr(33, 39, text);
  }
  cyan(text: string): string {
    return this.#sgr(36, 39, text);
  }
}
