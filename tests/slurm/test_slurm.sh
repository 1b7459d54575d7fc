#!/usr/bin/env bash
# Runs a sweep through a real one-node Slurm (Debian's slurmctld, slurmd, munge) as a job
# array with tools/slurm-sweep, and checks that the merged result equals the same sweep
# run locally. Starts the daemons in a temporary folder and stops them on exit.
#
#   tests/slurm/test_slurm.sh [COLLSIM]      (root; exit 77 = skipped: Slurm not installed)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
collsim="$(realpath "${1:-$repo/build/collsim}")"
for tool in slurmctld slurmd sbatch squeue sinfo scontrol munged mungekey; do
  command -v "$tool" >/dev/null || { echo "test_slurm: $tool not installed (tools/install-deps installs it)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "test_slurm: needs root to start slurmd"; exit 77; }

work="$(mktemp -d /tmp/collsim-slurm.XXXXXX)"
chmod 755 "$work"  # munge's socket folder and its parents must be searchable by all
export SLURM_CONF="$work/slurm.conf"
cleanup() {
  scontrol shutdown >/dev/null 2>&1 || true
  sleep 1
  [ -f "$work/munged.pid" ] && kill "$(cat "$work/munged.pid")" 2>/dev/null || true
  pkill -f "slurmd.*$work" 2>/dev/null || true
  # a daemon stopping may still write its log into $work while it is removed ("Directory not
  # empty"): try again a few times rather than fail a test whose checks all passed
  for _ in 1 2 3 4 5; do rm -rf "$work" 2>/dev/null && return 0; sleep 1; done
  rm -rf "$work"
}
trap cleanup EXIT

# munge: a key, and a daemon on a socket of our own
mungekey -c -k "$work/munge.key" >/dev/null 2>&1
chmod 600 "$work/munge.key"
munged -S "$work/munge.socket" --key-file="$work/munge.key" --pid-file="$work/munged.pid" \
  --log-file="$work/munged.log" --seed-file="$work/munged.seed"

node="$(hostname -s)"
memory=$(( $(awk '/MemAvailable/ {print $2}' /proc/meminfo) / 1024 * 8 / 10 ))
mkdir -p "$work/state" "$work/spool"
cat > "$SLURM_CONF" <<CONF
ClusterName=collsim-test
SlurmctldHost=$node
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.socket
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$node CPUs=$(nproc) RealMemory=$memory State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -c
slurmd
for _ in $(seq 60); do
  [ "$(sinfo -h -o %T 2>/dev/null | head -1)" = "idle" ] && break
  sleep 0.5
done
[ "$(sinfo -h -o %T | head -1)" = "idle" ] || { echo "test_slurm: the node never became idle"; cat "$work"/*.log; exit 1; }

cat > "$work/sweep.json" <<SWEEP
{"name": "slurm-test", "base": {"topology": "star:16", "collective": {"size": "1MiB"}},
 "axes": {"collective.algorithm": ["ring", "naive", "naive-binomial"], "workers": [2, 3, 5, 8, 16]}}
SWEEP

cd "$work"
COLLSIM="$collsim" "$repo/tools/slurm-sweep" "$work/sweep.json" "$work/slurm.csv" 4
"$collsim" sweep "$work/sweep.json" --out "$work/local.csv" --quiet

# Equal except for the wall time each point took.
strip() { cut -d, -f1-"$(( $(head -1 "$1" | tr ',' '\n' | grep -n '^wall_time$' | cut -d: -f1) - 1 ))" "$1"; }
if ! diff <(strip "$work/slurm.csv") <(strip "$work/local.csv"); then
  echo "test_slurm: the sweep run on Slurm differs from the local run"
  exit 1
fi
rows=$(( $(wc -l < "$work/slurm.csv") - 1 ))
[ "$rows" -eq 15 ] || { echo "test_slurm: $rows rows, expected 15"; exit 1; }
echo "test_slurm: 15 points on a 4-task Slurm job array equal the local sweep"
