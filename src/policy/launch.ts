/** What every child process Deft starts is: decided whole by the process policy. */

/** A child process, fully decided: program, arguments, its whole environment, where it starts. */
export interface Launch {
  program: string;
  args: string[];
  /** The child's entire environment: nothing of Deft's is inherited beyond it. */
  env: Record<string, string>;
  cwd?: string;
}
