#!/usr/bin/env bash
# Starts a single-node Slurm cluster whose every file lives in DIR (config, munge key and socket,
# state, spool, logs), for tests and demos of `deft batch --slurm`. Needs root; installs
# slurmctld, slurmd, slurm-client and munge with apt when they are missing. Prints the line to
# eval (`export SLURM_CONF=DIR/slurm.conf`) on stdout; everything else goes to stderr.
# Users who are not root may submit jobs too (their jobs run under their own uid): DIR, the
# config and munge's socket are readable by all, and the start checks that `nobody` (uid 65534,
# where it exists) can run a job.
#
#   eval "$(scripts/slurm/start-local-slurm.sh /tmp/slurm)"
#   SLURM_LOCAL_CTLD_PORT / SLURM_LOCAL_SLURMD_PORT  ports (default 6817 / 6818)
#   SLURM_LOCAL_CPUS                                 CPUs the node offers (default: the real count)
set -euo pipefail
# Whatever a user who is not root must read (DIR, slurm.conf, munge's socket folder) is created
# readable by all, whatever umask the caller has.
umask 022

started=()
# Whatever this run started is stopped again when it fails: by pid file, and (a daemon that
# has not written its pid file yet) by the SLURM_CONF in its environment, as the stop script does.
die() {
  echo "start-local-slurm: $*" >&2
  for pidfile in "${started[@]}"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  [ ${#started[@]} -eq 0 ] || "$HERE/stop-local-slurm.sh" "$DIR" >&2
  exit 1
}
[ $# -eq 1 ] || die "usage: $0 DIR"
[ "$(id -u)" -eq 0 ] || die "needs root (munged and slurmd run as root here)"
mkdir -p "$1"
DIR=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
CTLD_PORT=${SLURM_LOCAL_CTLD_PORT:-6817}
SLURMD_PORT=${SLURM_LOCAL_SLURMD_PORT:-6818}
HOST=$(hostname -s)
export SLURM_CONF="$DIR/slurm.conf"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
  ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  echo "start-local-slurm: installing slurmctld slurmd slurm-client munge" >&2
  { apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      slurmctld slurmd slurm-client munge; } >&2 || die "apt-get could not install Slurm"
fi

# Already up and answering: only print the environment again.
if [ -f "$SLURM_CONF" ] && scontrol ping 2>/dev/null | grep -q "UP" &&
  [ "$(sinfo -h -n "$HOST" -o %T 2>/dev/null)" = idle ]; then
  echo "export SLURM_CONF=$SLURM_CONF"
  exit 0
fi

"$HERE/stop-local-slurm.sh" "$DIR" >&2 || true
rm -rf "$DIR"/{state,spool,run,log,munge}
mkdir -p "$DIR"/{state,spool,run,log,etc}
mkdir -p -m 755 "$DIR/munge"
chmod 700 "$DIR/etc"

for port in "$CTLD_PORT" "$SLURMD_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "port $port on 127.0.0.1 is already in use; choose others with SLURM_LOCAL_CTLD_PORT/SLURM_LOCAL_SLURMD_PORT"
  fi
done

# munged refuses a socket that not everyone can reach: every folder above it needs o+x.
d=$DIR
while [ "$d" != / ]; do
  [ "$(( 0$(stat -c %a "$d") & 01 ))" -ne 0 ] ||
    die "$d is not searchable by all (mode $(stat -c %a "$d")); munged needs o+x on every folder above its socket: chmod o+x $d, or pick another DIR"
  d=$(dirname "$d")
done

KEY="$DIR/etc/munge.key"
if [ ! -s "$KEY" ]; then
  mungekey --create --keyfile="$KEY" 2>/dev/null ||
    dd if=/dev/urandom of="$KEY" bs=1 count=1024 status=none
fi
chmod 600 "$KEY"

munged --key-file="$KEY" --socket="$DIR/munge/munge.socket.2" --pid-file="$DIR/run/munged.pid" \
  --seed-file="$DIR/run/munged.seed" --log-file="$DIR/log/munged.log" </dev/null \
  >"$DIR/log/munged.out" 2>&1 || die "munged did not start: $(tail -n 3 "$DIR/log/munged.log" "$DIR/log/munged.out" 2>/dev/null)"
started+=("$DIR/run/munged.pid")

IFS='|' read -r CPUS LAYOUT MEM < <(slurmd -C | awk '/^NodeName/ {
  for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  printf "%s|Boards=%s SocketsPerBoard=%s CoresPerSocket=%s ThreadsPerCore=%s|%d\n",
    v["CPUs"], v["Boards"], v["SocketsPerBoard"], v["CoresPerSocket"], v["ThreadsPerCore"], v["RealMemory"] * 0.9 }')
if [ -n "${SLURM_LOCAL_CPUS:-}" ]; then
  CPUS=$SLURM_LOCAL_CPUS
  LAYOUT=""
fi

cat >"$SLURM_CONF" <<CONF
ClusterName=local
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket.2
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
MailProg=/bin/true
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS $LAYOUT RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
chmod 644 "$SLURM_CONF"

# Why a daemon is gone: the end of its log and of what it printed before it had a log.
why() { tail -n 5 "$DIR/log/$1.log" "$DIR/log/$1.out" 2>/dev/null; }
# Whether the daemon of pid file $1 runs. A daemon writes its pid file a moment after it goes to
# the background (a second or more on a busy machine): until SECONDS reaches $2, a missing or
# empty file counts as alive.
alive() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || pid=
  [ -n "$pid" ] || { [ $SECONDS -lt "$2" ]; return; }
  [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null
}

slurmctld -f "$SLURM_CONF" </dev/null >"$DIR/log/slurmctld.out" 2>&1 ||
  die "slurmctld did not start: $(why slurmctld)"
started+=("$DIR/run/slurmctld.pid")
deadline=$((SECONDS + 30)) pidfile_due=$((SECONDS + 10))
until scontrol ping 2>/dev/null | grep -q UP; do
  [ $SECONDS -lt $deadline ] || die "slurmctld does not answer within 30 s"
  alive "$DIR/run/slurmctld.pid" "$pidfile_due" || die "slurmctld died: $(why slurmctld)"
  sleep 0.1
done

slurmd -f "$SLURM_CONF" -N "$HOST" </dev/null >"$DIR/log/slurmd.out" 2>&1 ||
  die "slurmd did not start: $(why slurmd)"
started+=("$DIR/run/slurmd.pid")
deadline=$((SECONDS + 60)) pidfile_due=$((SECONDS + 10))
while [ $SECONDS -lt $deadline ]; do
  state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  case $state in inval* | drain*)
    die "the node is $state: $(sinfo -h -n "$HOST" -o %E 2>&1)" ;;
  esac
  alive "$DIR/run/slurmd.pid" "$pidfile_due" || die "slurmd died: $(why slurmd)"
  sleep 0.1
done
[ "$state" = idle ] || die "the node did not become idle within 60 s (state: $state)"

# A job of root's, and one of a user who is not root, run under their own uid.
ran=$(srun -Q -n1 -t 1 id -u 2>&1) && [ "$ran" = 0 ] ||
  die "the cluster does not run root's jobs: $ran"
if getent passwd 65534 >/dev/null && command -v setpriv >/dev/null; then
  ran=$(setpriv --reuid 65534 --regid 65534 --clear-groups -- env -i PATH="$PATH" \
    SLURM_CONF="$SLURM_CONF" srun -Q -n1 -t 1 --chdir=/ id -u 2>&1) && [ "$ran" = 65534 ] ||
    die "the cluster does not run the jobs of users who are not root (tried nobody, uid 65534): $ran"
fi

echo "start-local-slurm: cluster up in $DIR (ports $CTLD_PORT/$SLURMD_PORT, $CPUS CPUs)" >&2
echo "export SLURM_CONF=$SLURM_CONF"
