#!/usr/bin/env bash
# A throwaway single-host Slurm (Debian's slurmctld/slurmd/munge packages) in
# one directory, for testing the sbatch job end to end: its own munge key and
# socket, slurm.conf with this host as the only node (CPUs from nproc), free
# high ports, state and spool under DIR, no cgroups (proctrack/linuxproc,
# task/none; SLURM_SINGLE_HOST_CGROUP=1: proctrack/cgroup and task/cgroup on
# the host's cgroup v1 hierarchies, as production clusters run, with a
# cgroup.conf beside slurm.conf; its cgroups are /slurm_HOST/... and stop
# removes what is left of them), MpiDefault=pmix when Slurm has it (Open MPI direct launch under
# srun), no accounting. Needs root (slurmd starts jobs as their user). Nothing
# outside DIR is touched; the daemons run in the background with their PIDs
# in DIR/*.pid.
#   scripts/nightly/slurm-single-host.sh start DIR   # prints SLURM_CONF=...; waits for an idle node
#   (SLURM_SINGLE_HOST_EXTRA="Prolog=...\nPrologFlags=..." start DIR: lines added to slurm.conf)
#   (SLURM_SINGLE_HOST_CGROUP=1 start DIR: proctrack/cgroup, task/cgroup)
#   (SLURM_SINGLE_HOST_NODES=N start DIR: N nodes HOST-1..HOST-N, one slurmd
#    each (slurmd -N NAME, Debian builds Slurm with multiple-slurmd), all on
#    this host with their own ports, spool and log; MpiDefault=none)
#   export SLURM_CONF=DIR/slurm.conf
#   sbatch --wait ...
#   scripts/nightly/slurm-single-host.sh logs DIR    # the daemons' logs
#   scripts/nightly/slurm-single-host.sh stop DIR    # kills the daemons (by their PIDs)
# Exit status of start: 0 when the node is idle, 1 otherwise (logs printed).
set -euo pipefail

usage() {
  sed -n '2,23s/^# \{0,1\}//p' "$0" >&2
  exit 2
}
(($# == 2)) || usage
cmd=$1
dir=$2

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'
}

print_logs() {
  local f
  for f in "$dir"/log/munged.log "$dir"/log/slurmctld.log "$dir"/log/slurmd*.log; do
    [[ -e $f ]] || continue
    echo "----- $f (last 60 lines)" >&2
    tail -n 60 "$f" >&2
  done
}

# stop_pid NAME: TERM the daemon whose PID is in DIR/NAME.pid, then KILL it
# after 10 s; removes the PID file.
stop_pid() {
  local file=$dir/$1.pid pid i
  [[ -r $file ]] || return 0
  pid=$(<"$file")
  if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

start() {
  [[ $(id -u) -eq 0 ]] || { echo "slurm-single-host: needs root" >&2; return 1; }
  local tool
  for tool in munged slurmctld slurmd sinfo sbatch srun python3; do
    command -v "$tool" >/dev/null ||
      { echo "slurm-single-host: $tool not found (apt-get install slurm-wlm munge)" >&2; return 1; }
  done
  local proctrack=proctrack/linuxproc task=task/none
  if [[ -n ${SLURM_SINGLE_HOST_CGROUP:-} ]]; then
    # Slurm 22.05's cgroup/v1 plugin needs each controller mounted under
    # CgroupMountpoint (slurmstepd checks DIR/freezer/tasks, then makes
    # /slurm_HOST/uid_U/job_J/step_S in it) and writable by root; without
    # cgroup.conf slurmstepd finds no mount point ("cgroup namespace
    # 'freezer' not mounted") and every job fails to launch.
    local controller
    for controller in freezer cpuset; do
      [[ -w /sys/fs/cgroup/$controller/tasks ]] || {
        echo "slurm-single-host: no writable cgroup v1 $controller hierarchy at /sys/fs/cgroup/$controller" >&2
        return 1
      }
    done
    proctrack=proctrack/cgroup task=task/cgroup
  fi
  mkdir -p "$dir"/{munge,state,spool,log,run}
  chmod 700 "$dir/munge"
  # munged insists on a key readable by its user only and a socket directory
  # that others cannot write to.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" --force ||
    { echo "slurm-single-host: munged did not start" >&2; print_logs; return 1; }

  local host cpus mpi ctld_port slurmd_port count=${SLURM_SINGLE_HOST_NODES:-1} nodes=() port ports=
  [[ $count =~ ^[1-9][0-9]*$ ]] || { echo "slurm-single-host: SLURM_SINGLE_HOST_NODES=$count" >&2; return 1; }
  host=$(hostname -s)
  cpus=$(nproc)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  while [[ $slurmd_port == "$ctld_port" ]]; do slurmd_port=$(free_port); done
  # One node: named as the host. Several: HOST-1.., each slurmd on a port of
  # its own, with its spool, PID file and log named by it (%n).
  local node_lines=
  if ((count == 1)); then
    nodes=("$host")
    node_lines="NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus State=UNKNOWN"
  else
    local n
    for ((n = 1; n <= count; n++)); do
      nodes+=("$host-$n")
      port=$(free_port)
      while [[ " $ctld_port $slurmd_port $ports " == *" $port "* ]]; do port=$(free_port); done
      ports+=" $port"
      node_lines+="NodeName=$host-$n NodeAddr=127.0.0.1 NodeHostname=$host Port=$port CPUs=$cpus State=UNKNOWN"$'\n'
    done
    node_lines=${node_lines%$'\n'}
  fi
  local spool=$dir/spool slurmd_pid=$dir/run/slurmd.pid slurmd_log=$dir/log/slurmd.log
  if ((count > 1)); then
    spool=$dir/spool/%n slurmd_pid=$dir/run/slurmd.%n.pid slurmd_log=$dir/log/slurmd.%n.log
  fi
  echo "${nodes[*]}" >"$dir/nodes"
  # Open MPI 4.1 (Debian) is built with PMIx: ranks started by srun find
  # each other through Slurm's mpi/pmix plugin. Without it, none.
  mpi=none
  # Several nodes: none (their stepds would share PMIx's /tmp/spmix_appdir_*
  # directory names and a 2-node step fails to launch).
  if ((count == 1)) &&
    [[ -n $(find /usr/lib/*/slurm-wlm /usr/lib/slurm* -maxdepth 1 -name 'mpi_pmix.so' 2>/dev/null) ]]; then
    mpi=pmix
  fi
  cat >"$dir/slurm.conf" <<CONF
# Throwaway single-host Slurm written by slurm-single-host.sh
ClusterName=fabtrack-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$slurmd_pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$slurmd_log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$dir/plugstack.conf
ProctrackType=$proctrack
TaskPlugin=$task
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=$mpi
ReturnToService=2
MailProg=/bin/true
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=600
KillWait=5
$node_lines
PartitionName=test Nodes=$(
    IFS=,
    echo "${nodes[*]}"
  ) Default=YES MaxTime=INFINITE State=UP
CONF
  if [[ -n ${SLURM_SINGLE_HOST_CGROUP:-} ]]; then
    # Tracking only: constraining cores or memory would only make the
    # throwaway node's jobs depend on this host's cgroup limits.
    cat >"$dir/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
CONF
  fi
  [[ -z ${SLURM_SINGLE_HOST_EXTRA:-} ]] || printf '%b\n' "$SLURM_SINGLE_HOST_EXTRA" >>"$dir/slurm.conf"
  : >"$dir/plugstack.conf"
  export SLURM_CONF=$dir/slurm.conf
  # -D: foreground, so the PID we record is the daemon's; -c: no old state.
  slurmctld -D -c -f "$dir/slurm.conf" >>"$dir/log/slurmctld.out" 2>&1 &
  echo $! >"$dir/slurmctld.pid"
  local node
  if ((count == 1)); then
    slurmd -D -f "$dir/slurm.conf" -N "$host" >>"$dir/log/slurmd.out" 2>&1 &
    echo $! >"$dir/slurmd.pid"
  else
    for node in "${nodes[@]}"; do
      mkdir -p "$dir/spool/$node"
      slurmd -D -f "$dir/slurm.conf" -N "$node" >>"$dir/log/slurmd.$node.out" 2>&1 &
      echo $! >"$dir/slurmd.$node.pid"
    done
  fi

  local i state='' want
  want=$(printf 'idle %.0s' "${nodes[@]}")
  for ((i = 0; i < 300; i++)); do
    state=$(sinfo -h -N -o '%T' 2>/dev/null | tr '\n' ' ' || true)
    [[ $state == "$want" ]] && break
    sleep 0.2
  done
  if [[ $state != "$want" ]]; then
    echo "slurm-single-host: nodes ${nodes[*]} are '${state:-unknown}', not all idle after 60 s" >&2
    print_logs
    return 1
  fi
  echo "SLURM_CONF=$dir/slurm.conf"
}

case $cmd in
  start) start ;;
  stop)
    # Jobs first: slurmstepd and a job's processes outlive slurmd.
    if [[ -r $dir/slurmctld.pid && -r $dir/slurm.conf ]]; then
      export SLURM_CONF=$dir/slurm.conf
      jobs=$(squeue -h -o %A 2>/dev/null || true)
      if [[ -n $jobs ]]; then
        # shellcheck disable=SC2086  # one job id per word
        scancel --full $jobs 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
          [[ -z $(squeue -h -o %A 2>/dev/null) ]] && break
          sleep 0.2
        done
      fi
    fi
    for f in "$dir"/slurmd*.pid; do
      [[ -e $f ]] || continue
      f=${f##*/}
      stop_pid "${f%.pid}"
    done
    stop_pid slurmctld
    stop_pid munge
    # cgroup mode: Slurm removes a job's cgroups at its end, never its own
    # /slurm_HOST; rmdir removes only what no process is in any more.
    if [[ -r $dir/cgroup.conf && -r $dir/nodes ]]; then
      for node in $(<"$dir/nodes"); do
        find /sys/fs/cgroup/*/"slurm_$node" -depth -type d -exec rmdir {} + 2>/dev/null || true
      done
    fi
    ;;
  logs) print_logs 2>&1 ;;
  *) usage ;;
esac
