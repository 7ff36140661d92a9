/**
 * Freezing the sandboxes: every process in every PID namespace Deft started (the model's shells
 * and what they started, the sandboxed tool hosts) is stopped, checked to be stopped, and later
 * checked to have stayed stopped, then continued. A program that acts outside the sandbox on a
 * path the model can change (an ACP client opening a file by name) runs while the model's
 * processes cannot move a single link.
 *
 * How it stops them. Stopping pids one by one from outside races with fork. Instead, for each
 * sandbox a process is placed *inside* its PID namespace (nsenter into its user and PID
 * namespaces, from the host's mounts, so nothing of the sandbox's files runs) and sends
 * `kill(-1, SIGSTOP)`: the kernel signals every process of the namespace, nested namespaces
 * included, in one walk of the task list under the lock fork takes, so no child escapes; the
 * namespace's first process (which `kill -1` skips) is stopped from outside first. Then the
 * helper stops itself.
 *
 * How it knows. Everything is checked from outside the sandbox (the model cannot reach or
 * impersonate the helper's host side): every thread of every process under each sandbox's first
 * process (and the helper inside) must be stopped (or dead); no io_uring worker may exist (they
 * do not stop, and could run a queued rename); no process may hold a timer that sends SIGCONT,
 * nor an fd set to signal on I/O (either could continue it). Each thread's context-switch counts
 * are kept: `release` checks again that every thread is still stopped with the same counts, and
 * that no sandbox appeared, so a freeze broken by any means is seen afterwards.
 *
 * The helper is one bash run by the policy (Deno may not read /proc under Deft's own flags). It
 * bounds the frozen time itself: without word from Deft within the limit, or when Deft goes away
 * (its stdin closes), it continues everything and exits. What was already stopped before the
 * freeze (a process the model stopped with `kill -STOP`, a job its shell suspended) is looked at
 * first and left stopped by the thaw, by the helper's and by a fresh one's: a freeze is invisible
 * to the model's processes. (A process continued in the instant between that look and the stop
 * stays stopped, as it was a moment before; it is the model's own.)
 */
import { helperLaunch, spawnChild } from "./process.ts";

/** A freeze in force; `release` must be called on every path. */
export interface Freeze {
  /** How many processes were stopped. */
  readonly stopped: number;
  /**
   * Checks that nothing in the sandboxes ran since the freeze (and no sandbox appeared), then
   * continues every process. `held` false says why the freeze may have been broken. Never throws.
   */
  release(): Promise<{ held: boolean; why?: string }>;
}

/** The freeze could not be established; nothing is left stopped. */
export class FreezeRefused extends Error {
  constructor(why: string) {
    super(why);
    this.name = "FreezeRefused";
  }
}

/** How long the freeze may take to establish before it is given up. */
const ESTABLISH_MS = 5_000;

// $1: "freeze" or "thaw"; $2: seconds the freeze may last without word from Deft; $3 (thaw): the
// pids to leave stopped. Protocol on stdout: "keep [PID…]" (what was stopped already), then
// "frozen N" | "refused WHY"; then, after a line on stdin (or the limit, or
// EOF): "held" | "broken WHY", and "thawed". Fields after the comm in /proc/P/stat: state ppid
// pgrp session tty tpgid flags …; PF_IO_WORKER is flag 0x10; FASYNC is O_ASYNC, octal 020000.
const SCRIPT = `
PATH=/usr/sbin:/usr/bin:/sbin:/bin
deft=$PPID mode=$1 limit=$2
exec {pause}<> <(:)
declare -A kids
R=() N=() M=() K=() FP="" WHY="" R0=""
fast=0
[[ -r /proc/$$/task/$$/children ]] && fast=1
# Without /proc/P/task/T/children, one scan of every process's parent.
table() {
  ((fast)) && return
  kids=()
  local f s F
  for f in /proc/[0-9]*/stat; do
    { read -r s < "$f"; } 2>/dev/null || continue
    F=(\${s##*) })
    kids[\${F[1]}]+=" \${f:6:-5}"
  done
}
kidsof() {
  K=()
  if ((fast)); then
    local t c
    for t in /proc/$1/task/[0-9]*/children; do
      # The list ends without a newline: read reports the end, with the words read.
      c=()
      { read -r -a c < "$t"; } 2>/dev/null
      K+=("\${c[@]}")
    done
  else
    K=(\${kids[$1]})
  fi
}
roots() {
  R=()
  kidsof "$deft"
  local queue=("\${K[@]}") p
  while ((\${#queue[@]})); do
    p=\${queue[0]} queue=("\${queue[@]:1}")
    [[ $p == "$$" ]] && continue
    if [[ /proc/$p/ns/pid -ef /proc/$deft/ns/pid ]]; then
      kidsof "$p"
      queue+=("\${K[@]}")
    elif [[ -e /proc/$p/ns/pid ]]; then
      R+=("$p")
    fi
  done
}
members() {
  M=()
  local queue=("$@") p
  while ((\${#queue[@]})); do
    p=\${queue[0]} queue=("\${queue[@]:1}")
    M+=("$p")
    kidsof "$p"
    queue+=("\${K[@]}")
  done
}
inside() {
  local n out=()
  for n in "\${N[@]}"; do
    kidsof "$n"
    out+=("\${K[@]}")
  done
  echo "\${out[*]}"
}
# 0: all stopped (FP set); 1: not yet; 2: never (WHY set).
check() {
  table
  FP="" WHY=""
  local n p t s F line v c fd fl
  for n in "\${N[@]}"; do
    [[ -e /proc/$n ]] || { WHY="the helper inside a sandbox was killed"; return 2; }
    kidsof "$n"
    ((\${#K[@]})) || return 1
  done
  members "\${R[@]}" $(inside)
  for p in "\${M[@]}"; do
    for t in /proc/$p/task/[0-9]*; do
      { read -r s < "$t/stat"; } 2>/dev/null || continue
      F=(\${s##*) })
      if ((F[6] & 16)); then WHY="a process in the sandbox uses io_uring"; return 2; fi
      [[ \${F[0]} == [ZX] ]] && continue
      [[ \${F[0]} == [Tt] ]] || return 1
      c=""
      while read -r line v; do
        [[ $line == *ctxt_switches: ]] && c+=":$v"
      done 2>/dev/null < "$t/status"
      FP+=" \${t##*/}$c"
    done
    while read -r line v; do
      if [[ $line == signal: && \${v%%/*} == 18 ]]; then
        WHY="a process in the sandbox holds a timer that sends SIGCONT"; return 2
      fi
    done 2>/dev/null < "/proc/$p/timers"
    for fd in /proc/$p/fdinfo/[0-9]*; do
      while read -r line fl; do
        if [[ $line == flags: ]]; then
          if ((0$fl & 020000)); then WHY="a process in the sandbox asked for I/O signals"; return 2; fi
          break
        fi
      done 2>/dev/null < "$fd"
    done
  done
  return 0
}
# A process stopped before the freeze (the model's own kill -STOP, a job stopped by its shell) is
# left stopped by the thaw: KEEP holds those pids, looked at before anything was stopped.
thaw() {
  table
  roots
  local p
  members "\${R[@]}" $R0 $(inside)
  for p in "\${M[@]}"; do
    [[ " $KEEP " == *" $p "* ]] && continue
    kill -s CONT "$p" 2>/dev/null
  done
}
KEEP=$3
if [[ $mode == thaw ]]; then thaw; echo thawed; exit 0; fi
refuse() { thaw; echo "refused $1"; exit 0; }
table
roots
R0="\${R[*]}"
members "\${R[@]}"
KEEP=""
for p in "\${M[@]}"; do
  { read -r s < "/proc/$p/stat"; } 2>/dev/null || continue
  F=(\${s##*) })
  [[ \${F[0]} == T ]] && KEEP+=" $p"
done
echo "keep$KEEP"
for r in "\${R[@]}"; do
  kill -s STOP "$r" 2>/dev/null || refuse "a sandbox ended while it was being stopped"
  user=()
  [[ /proc/$r/ns/user -ef /proc/$$/ns/user ]] || user=(-U --preserve-credentials)
  nsenter -t "$r" "\${user[@]}" -p -- /bin/bash --noprofile --norc -c 'kill -s STOP -1; kill -s STOP $$' </dev/null >/dev/null 2>&1 &
  N+=($!)
done
for ((i = 0; ; i++)); do
  check
  case $? in
  0) break ;;
  2) refuse "$WHY" ;;
  esac
  ((i < 300)) || refuse "the sandbox's processes did not all stop within 3 s"
  read -r -t 0.01 -u $pause _
done
FP0=$FP
echo "frozen \${#M[@]}"
read -r -t "$limit" _
held=1 why=""
table
roots
if [[ \${R[*]} != "$R0" ]]; then
  held=0 why="a sandbox started or ended during the freeze"
else
  check
  case $? in
  0) [[ $FP == "$FP0" ]] || { held=0 why="a process in the sandbox ran during the freeze"; } ;;
  1) held=0 why="a process in the sandbox was running again" ;;
  2) held=0 why=$WHY ;;
  esac
fi
((held)) && echo held || echo "broken $why"
thaw
echo thawed
`;

/**
 * Stops every process in every sandbox Deft started (see the module's note), for at most
 * `limitSeconds`; throws `FreezeRefused` when that cannot be established and proved, with
 * everything continued again.
 *
 * @example
 * ```ts
 * const freeze = await freezeSandboxes(30);
 * try { await act(); } finally { const { held } = await freeze.release(); }
 * ```
 */
export async function freezeSandboxes(limitSeconds: number): Promise<Freeze> {
  let child: Deno.ChildProcess;
  try {
    child = spawnChild(
      helperLaunch("bash", [
        "--noprofile",
        "--norc",
        "-c",
        SCRIPT,
        "deft-freeze",
        "freeze",
        String(
          Math.max(1, Math.ceil(limitSeconds)),
        ),
      ]),
      { stdin: "piped", stdout: "piped", stderr: "null" },
    );
  } catch (e) {
    throw new FreezeRefused(`bash could not start (${(e as Error).message})`);
  }
  const lines = new Lines(child.stdout);
  const stdin = child.stdin.getWriter();
  const said = await withTimeout(lines.next(), ESTABLISH_MS);
  const keep = said?.startsWith("keep")
    ? said.slice("keep".length).split(" ").filter((p) => /^[0-9]+$/.test(p))
    : [];
  const first = said?.startsWith("keep") ? await withTimeout(lines.next(), ESTABLISH_MS) : said;
  if (first === undefined || !first.startsWith("frozen ")) {
    // Not frozen: whatever the helper got to stop is continued, by it or by a pass of our own.
    const why = first?.startsWith("refused ")
      ? first.slice("refused ".length)
      : first === undefined
      ? "the freeze did not answer in time"
      : "the freeze helper ended early";
    await finish(child, stdin, lines, false, keep);
    throw new FreezeRefused(why);
  }
  let released: Promise<{ held: boolean; why?: string }> | undefined;
  return {
    stopped: Number(first.slice("frozen ".length)) || 0,
    release() {
      released ??= (async () => {
        await stdin.write(new TextEncoder().encode("check\n")).catch(() => {});
        const verdict = await withTimeout(lines.next(), ESTABLISH_MS);
        await finish(child, stdin, lines, verdict !== undefined, keep);
        if (verdict === "held") return { held: true };
        return {
          held: false,
          why: verdict?.startsWith("broken ")
            ? verdict.slice("broken ".length)
            : "the freeze helper did not confirm the freeze",
        };
      })();
      return released;
    },
  };
}

/**
 * Continues every process in Deft's sandboxes (after a helper was lost) but those in `keep`, which
 * were stopped before the freeze. Never throws.
 */
export async function thawSandboxes(keep: readonly string[] = []): Promise<void> {
  try {
    const child = spawnChild(
      helperLaunch("bash", [
        "--noprofile",
        "--norc",
        "-c",
        SCRIPT,
        "deft-thaw",
        "thaw",
        "1",
        keep.join(" "),
      ]),
      { stdin: "null", stdout: "null", stderr: "null" },
    );
    await child.status;
  } catch {
    // Without bash nothing was frozen either.
  }
}

/** Waits for the helper to thaw and exit; kills it and thaws with a fresh one if it does not. */
async function finish(
  child: Deno.ChildProcess,
  stdin: WritableStreamDefaultWriter<Uint8Array>,
  lines: Lines,
  answered: boolean,
  keep: readonly string[] = [],
): Promise<void> {
  await stdin.close().catch(() => {});
  const thawed = answered ? await withTimeout(lines.next(), ESTABLISH_MS) : undefined;
  if (thawed !== "thawed") {
    try {
      child.kill("SIGKILL");
    } catch {
      // Gone already.
    }
    await child.status;
    await thawSandboxes(keep);
  } else {
    await child.status;
  }
  await lines.close();
}

/** The helper's stdout, a line at a time. */
class Lines {
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffered = "";

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next line, or undefined at the end. */
  async next(): Promise<string | undefined> {
    while (!this.#buffered.includes("\n")) {
      const { value, done } = await this.#reader.read().catch(() => ({ value: "", done: true }));
      if (done) return undefined;
      this.#buffered += value;
    }
    const at = this.#buffered.indexOf("\n");
    const line = this.#buffered.slice(0, at);
    this.#buffered = this.#buffered.slice(at + 1);
    return line;
  }

  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

/** `promise`'s value, or undefined after `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
