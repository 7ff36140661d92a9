"""Runs a command in a pseudo-terminal and plays a script against it.

Usage: python3 pty_drive.py SCRIPT.json
SCRIPT: {"argv": [...], "cwd": str, "env": {...}, "steps": [{"expect": regex, "send": text}],
         "timeout": seconds per step, "cols"/"rows": the terminal's size (default: none set)}
Each step waits until `expect` matches the output that followed the previous match, then writes
`send` (escapes like \\x04 for Ctrl-D are the caller's). Prints one JSON object on stdout:
{"code": exit code or null, "output": everything the terminal showed, "failed": step index or null}.
"""
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time


def main():
    script = json.load(open(sys.argv[1]))
    timeout = script.get("timeout", 90)
    pid, fd = pty.fork()
    if pid == 0:
        if script.get("cols"):
            # The terminal's size, set before the program starts and asks for it.
            size = struct.pack("HHHH", script.get("rows", 24), script["cols"], 0, 0)
            fcntl.ioctl(0, termios.TIOCSWINSZ, size)
        os.chdir(script["cwd"])
        env = dict(os.environ)
        env.update(script.get("env", {}))
        os.execvpe(script["argv"][0], script["argv"], env)
    output = b""
    mark = 0
    failed = None

    def read_some(deadline):
        nonlocal output
        wait = max(0.0, deadline - time.time())
        ready, _, _ = select.select([fd], [], [], min(wait, 0.2))
        if not ready:
            return True
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        output += chunk
        return True

    alive = True
    for index, step in enumerate(script["steps"]):
        pattern = re.compile(step["expect"].encode(), re.S) if step.get("expect") else None
        deadline = time.time() + timeout
        while pattern is not None:
            found = pattern.search(output, mark)
            if found:
                mark = found.end()
                break
            if time.time() > deadline or not alive:
                failed = index
                break
            alive = read_some(deadline)
        if failed is not None:
            break
        if "send" in step:
            time.sleep(step.get("delay", 0.05))
            os.write(fd, step["send"].encode())
    code = None
    deadline = time.time() + (timeout if failed is None else 2)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            break
        read_some(time.time() + 0.2)
    while read_some(time.time()) and select.select([fd], [], [], 0)[0]:
        pass
    print(json.dumps({"code": code, "output": output.decode("utf-8", "replace"), "failed": failed}))


main()
