#!/usr/bin/env bash
# A private Docker daemon for tests and demos: its own data root, exec root and socket under DIR,
# no bridge and no iptables (containers run with --network none), so it touches nothing else on
# the machine. Needs root and dockerd (apt-get install docker.io).
#
#   scripts/containers/dockerd.sh start DIR   prints `export DOCKER_HOST=unix://DIR/docker.sock`
#   scripts/containers/dockerd.sh stop DIR    stops it (containerd, which it started, goes with it)
#
# DIR's path must be short: a unix socket path has at most 107 bytes.
set -euo pipefail

die() { echo "dockerd.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: $0 start|stop DIR"
mkdir -p "$2"
DIR=$(cd "$2" && pwd)
sock="$DIR/docker.sock"
pidfile="$DIR/dockerd.pid"

stop() {
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  # Anything the daemon left mounted under its roots (overlay layers, netns files).
  grep -F " $DIR/" /proc/self/mounts | awk '{print $2}' | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
}

case "$1" in
start)
  [ "$(id -u)" -eq 0 ] || die "needs root"
  command -v dockerd >/dev/null || die "dockerd is not installed (apt-get install docker.io)"
  [ ${#sock} -le 100 ] || die "socket path $sock is too long for a unix socket; pick a shorter DIR"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null &&
    DOCKER_HOST="unix://$sock" docker version >/dev/null 2>&1; then
    echo "export DOCKER_HOST=unix://$sock"
    exit 0
  fi
  stop
  mkdir -p "$DIR/data" "$DIR/exec"
  # setsid: the daemon outlives the shell that started it, and a Ctrl-C there does not reach it.
  setsid dockerd --iptables=false --ip6tables=false --bridge=none \
    --data-root "$DIR/data" --exec-root "$DIR/exec" -H "unix://$sock" \
    --pidfile "$pidfile" </dev/null >"$DIR/dockerd.log" 2>&1 &
  for _ in $(seq 1 300); do
    if DOCKER_HOST="unix://$sock" docker version >/dev/null 2>&1; then
      echo "export DOCKER_HOST=unix://$sock"
      exit 0
    fi
    sleep 0.1
  done
  stop
  die "dockerd did not answer within 30 s: $(tail -n 5 "$DIR/dockerd.log")"
  ;;
stop) stop ;;
*) die "usage: $0 start|stop DIR" ;;
esac
