/** Deft's version, printed by `deft --version`. */
export const VERSION = "0.1.0";
