/**
 * Inputs some tests read from the machine (a real source tree, Universal Ctags). A test whose
 * input is missing fails with what to install; it never passes without testing. `.ci/run`
 * installs each of them.
 */

/**
 * Python's standard library folder, asked of the system's python3 (a distribution's keeps no
 * site-packages there; a pyenv build's holds hundreds of MB of them), else of `python3` on PATH.
 * Fails the test when there is none.
 */
export function pythonStdlib(): string {
  const ask = (python: string) => {
    try {
      const out = new Deno.Command(python, {
        args: ["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
        stdout: "piped",
        stderr: "null",
      }).outputSync();
      const dir = out.success ? new TextDecoder().decode(out.stdout).trim() : "";
      return dir && isDir(`${dir}/http`) ? dir : undefined;
    } catch {
      return undefined; // Not installed: reported below.
    }
  };
  const dir = ask("/usr/bin/python3") ?? ask("python3");
  if (!dir) {
    throw new Error(
      "this test reads Python's standard library, and python3 is missing or has none: " +
        "install python3 (apt-get install python3; .ci/run installs it)",
    );
  }
  return dir;
}

/** Fails the test unless every folder in `dirs` exists, naming the package that brings it. */
export function requireDirs(dirs: readonly string[], install: string): void {
  const missing = dirs.filter((dir) => !isDir(dir));
  if (missing.length) {
    throw new Error(`this test reads ${missing.join(", ")}, which is missing: ${install}`);
  }
}

/** Fails the test unless Universal Ctags is on PATH. */
export function requireCtags(): void {
  let version = "";
  try {
    const out = new Deno.Command("ctags", { args: ["--version"], stdout: "piped", stderr: "null" })
      .outputSync();
    if (out.success) version = new TextDecoder().decode(out.stdout);
  } catch {
    // Not installed: reported below.
  }
  if (!version.includes("Universal Ctags")) {
    throw new Error(
      "this test compares against Universal Ctags, which is not on PATH: " +
        "apt-get install universal-ctags (.ci/run installs it)",
    );
  }
}

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
