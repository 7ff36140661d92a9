/** The options of `deft interactive`, apart so its parts name them without a cycle. */
import type { SessionOptions } from "../../agent/session.ts";
import type { ResumeOptions } from "../resume.ts";
import type { ColorMode } from "../console/style.ts";

/** Options of `deft interactive`. */
export interface InteractiveOptions extends SessionOptions, Pick<ResumeOptions, "continue"> {
  workingDir?: string;
  trajectoryFile?: string;
  color?: ColorMode;
  /** `--resume ID`, or `--resume` alone (true): pick one of the workspace's sessions. */
  resume?: string | boolean;
  /** The first prompt (`deft "task"`, `deft interactive "task"`), sent at once. */
  prompt?: string;
  /** `--image FILE` (repeatable): images sent with the first prompt. */
  image?: string[];
}
