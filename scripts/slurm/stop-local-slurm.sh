#!/usr/bin/env bash
# Stops the cluster start-local-slurm.sh started in DIR: the daemons from their pid files, then
# any job processes (slurmstepd and its children) left behind. Keeps DIR's files.
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 1; }
DIR=$(cd "$1" 2>/dev/null && pwd) || exit 0

running() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

pids=()
for name in slurmd slurmctld munged; do
  f="$DIR/run/$name.pid"
  [ -f "$f" ] && pid=$(cat "$f") && running "$pid" && pids+=("$pid")
done
# This cluster's daemons (one that has not written its pid file yet too) and its jobs carry its
# config path in their environment; a job also has its SLURM_JOB_ID. Other processes with that
# SLURM_CONF (the shell that ran `eval "$(start-local-slurm.sh DIR)"`, the start script that runs
# this one, a `deft batch --wait` following an array) are the users', and are left alone.
for env in /proc/[0-9]*/environ; do
  pid=${env#/proc/}; pid=${pid%/environ}
  [ "$pid" = $$ ] && continue
  vars=$({ tr '\0' '\n' <"$env"; } 2>/dev/null) || continue
  grep -qx "SLURM_CONF=$DIR/slurm.conf" <<<"$vars" || continue
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
  case $comm in
  slurmstepd | slurmd | slurmctld | munged) pids+=("$pid") ;;
  *) grep -q '^SLURM_JOB_ID=' <<<"$vars" && pids+=("$pid") ;;
  esac
done
[ ${#pids[@]} -eq 0 ] && exit 0
kill "${pids[@]}" 2>/dev/null
for _ in $(seq 1 50); do
  left=()
  for pid in "${pids[@]}"; do running "$pid" && left+=("$pid"); done
  [ ${#left[@]} -eq 0 ] && exit 0
  sleep 0.1
done
kill -9 "${left[@]}" 2>/dev/null
exit 0
