#!/usr/bin/env bash
# A one-node Slurm on this host for Gantry's Slurm backend: munged, slurmctld and slurmd as root, everything
# (config, state, logs, pid files, munge socket and key, fake GPU device files) under one directory.
#
#   tools/slurm/start-test-slurm.sh start [DIR]   install slurm-wlm + munge with apt when missing, write the config,
#                                                 start the daemons, wait until the node is idle; prints SLURM_CONF=...
#   tools/slurm/start-test-slurm.sh stop [DIR]    stop the daemons started from DIR (by their pid files)
#
# start prints SLURM_CONF=<file> and STARTED=yes (or STARTED=no when it found them already running from DIR).
# stop cancels the partition's jobs first (their slurmstepd processes would outlive slurmd).
# DIR defaults to /tmp/gantry-slurm. The node is this host (NodeName=$(hostname -s), NodeAddr=127.0.0.1) with
# 8 fake GPUs (gres gpu:h100, files DIR/dev/nvidia0..7: 0-3 on socket 0, 4-7 on socket 1), features rack_r1 and
# spine_s1, in partition `gantry` that only group root may submit to (the one entrance). Ports: SLURMCTLD_PORT
# (default 16817) and SLURMD_PORT (16818), so a real Slurm on the default ports is left alone. Point clients at it
# with SLURM_CONF=DIR/slurm.conf. Exit codes: 0 up, 2 cannot run here (not root, no apt, daemons fail; the reason
# is on stderr), 1 usage.
set -euo pipefail

cmd="${1:-start}"
dir="${2:-/tmp/gantry-slurm}"
ctld_port="${SLURMCTLD_PORT:-16817}"
slurmd_port="${SLURMD_PORT:-16818}"
node="$(hostname -s)"

cannot() { echo "start-test-slurm: $*" >&2; exit 2; }

stop_pid() {
  local f="$1"
  [ -f "$f" ] || return 0
  local pid
  pid="$(cat "$f" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

stop_all() {
  # jobs first: their slurmstepd processes would outlive slurmd
  if [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid" 2>/dev/null)" 2>/dev/null; then
    SLURM_CONF="$dir/slurm.conf" timeout 5 scancel --partition=gantry >/dev/null 2>&1 || true
    for _ in $(seq 1 50); do
      [ -z "$(SLURM_CONF="$dir/slurm.conf" timeout 5 squeue -h -p gantry -t R,CG,S 2>/dev/null || echo busy)" ] && break
      sleep 0.2
    done
  fi
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  stop_pid "$dir/munged.pid"
}

case "$cmd" in
  stop) stop_all; exit 0 ;;
  start) ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 1 ;;
esac

[ "$(id -u)" = 0 ] || cannot "needs root (slurmd runs jobs as their users); running as $(id -un)"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null \
   || ! command -v sbatch >/dev/null; then
  command -v apt-get >/dev/null || cannot "slurm-wlm/munge are not installed and there is no apt-get"
  echo "start-test-slurm: installing slurm-wlm and munge with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge; } >"/tmp/gantry-slurm-apt.log" 2>&1 \
    || cannot "apt-get install slurm-wlm munge failed (log: /tmp/gantry-slurm-apt.log): $(tail -3 /tmp/gantry-slurm-apt.log | tr '\n' ' ')"
fi

export SLURM_CONF="$dir/slurm.conf"
# already up (an earlier run, or an operator's): reuse it
if [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null \
   && [ -f "$dir/slurmd.pid" ] && kill -0 "$(cat "$dir/slurmd.pid")" 2>/dev/null \
   && timeout 5 sinfo -h -n "$node" -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
  echo "SLURM_CONF=$SLURM_CONF"
  echo "STARTED=no"
  exit 0
fi
stop_all
# a fresh controller: no jobs recovered from an earlier run
rm -rf "$dir/state" "$dir/spool"

mkdir -p "$dir"/{dev,state,spool,log,munge}
chmod 0711 "$dir" "$dir/munge"
for i in 0 1 2 3 4 5 6 7; do touch "$dir/dev/nvidia$i"; done
if [ ! -s "$dir/munge/munge.key" ]; then
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 0400 "$dir/munge/munge.key"

cat >"$dir/slurm.conf" <<CONF
# written by tools/slurm/start-test-slurm.sh: one node, fake GPUs, for Gantry's Slurm backend tests
ClusterName=gantry-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
GresTypes=gpu
ReturnToService=2
MinJobAge=600
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
Waittime=0
NodeName=$node NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=8192 Gres=gpu:h100:8 Features=rack_r1,spine_s1 State=UNKNOWN
# the one entrance: only Gantry's group (here root) may submit; no other partition holds these nodes
PartitionName=gantry Nodes=$node Default=YES MaxTime=INFINITE State=UP AllowGroups=root OverSubscribe=NO
CONF

cat >"$dir/gres.conf" <<CONF
NodeName=$node Name=gpu Type=h100 File=$dir/dev/nvidia[0-3] Cores=0-1
NodeName=$node Name=gpu Type=h100 File=$dir/dev/nvidia[4-7] Cores=2-3
CONF

munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
  || cannot "munged did not start: $(tail -3 "$dir/log/munged.log" 2>/dev/null | tr '\n' ' ')"

slurmctld -f "$SLURM_CONF" || cannot "slurmctld did not start: $(tail -5 "$dir/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
slurmd -f "$SLURM_CONF" || cannot "slurmd did not start: $(tail -5 "$dir/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"

for _ in $(seq 1 120); do
  state="$(timeout 5 sinfo -h -n "$node" -o %t 2>/dev/null || true)"
  case "$state" in
    idle|mix|alloc) echo "SLURM_CONF=$SLURM_CONF"; echo "STARTED=yes"; exit 0 ;;
    down*|drain*|drng*) timeout 5 scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true ;;
  esac
  sleep 0.5
done
reason="$(timeout 5 scontrol show node "$node" 2>&1 | grep -o 'Reason=.*' || true)"
stop_all
cannot "node $node did not become idle within 60 s (state '${state:-unknown}' $reason); logs in $dir/log"
