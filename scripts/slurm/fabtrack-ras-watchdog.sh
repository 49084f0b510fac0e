#!/usr/bin/env bash
# Watches a running Slurm job through NCCL's RAS once it outlives its
# expected step time, and alerts once when it is stuck: after AFTER seconds
# (the time a step is expected to take), and then every INTERVAL seconds
# while the job runs, it runs
#   fabtrack ras watch --job $SLURM_JOB_ID --every EVERY --count COUNT \
#     --hosts-file <the job's nodes> --format json
# on this node (RAS answers on localhost:28028 on every node of an NCCL job,
# NCCL >= 2.24). The snapshots and the verdict are stored with the job;
# fabtrack keeps, per job, the first time it was found stuck (the dedup key)
# and says "alert": "new" only to the first watch that finds it stuck: this
# script then runs ALERT_COMMAND once, with the summary as its arguments
# (and on every watch that says "unconfirmed": the database was away, what
# the watch took is spooled).
# The same stuck job is a Grafana alert (dashboards/grafana/alerting,
# fabtrack-stuck-job) and a stuck_job problem in the next `fabtrack analyze`.
# Where NCCL >= 2.29 streams RAS events (MONITOR), each watch reads them too:
# a process declared dead (PEER_DEAD) ends that watch at once and is alerted
# once per job ("process dead"). Events that come between two watches are
# not streamed to anyone; the next watch's snapshots show the dead ranks.
#
# Wiring it (paths are examples):
#  - In the job's batch script, before the srun of the training:
#      /usr/local/sbin/fabtrack-ras-watchdog.sh &
#    It ends when the batch script does (it checks every 2 s that the shell
#    that started it is still its parent: under proctrack/linuxproc Slurm
#    does not kill what a batch script leaves behind; under proctrack/cgroup
#    Slurm kills it, SIGKILL, with the batch step, and the next watchdog
#    started on the node removes the work directory it left), or at scancel
#    (TERM). The job's environment reaches it: FABTRACK_RAS_WATCHDOG_* work
#    here.
#  - Or for every job, from the Prolog and Epilog (slurmd runs them as root
#    on each node of the job, with SLURM_JOB_ID, SLURM_NODELIST and
#    SLURMD_NODENAME but not the job's environment nor PATH: use the conf
#    file and absolute paths):
#      Prolog script:  /usr/local/sbin/fabtrack-ras-watchdog.sh --prolog
#      Epilog script:  /usr/local/sbin/fabtrack-ras-watchdog.sh --epilog
#    --prolog returns at once, and does nothing except on the job's first
#    node; there it starts the watchdog in a session of its own, and
#    returns only once it is (slurmd kills the Prolog's process group as
#    soon as the Prolog exits: a plain `setsid ... &` is killed with it
#    before it detaches), its PID in RUN_DIR/ras-watchdog.<job>.pid.
#    --epilog stops the job's watchdog (TERM) and returns. Slurm 22.05 runs
#    the Prolog from slurmd, outside the job's cgroup, also with
#    ProctrackType=proctrack/cgroup and PrologFlags=Alloc,Contain: the
#    watchdog is not killed with the job, the Epilog line stops it.
# Either way it also ends when RAS stops answering, when scontrol no longer
# shows the job running (checked before each watch), and after MAX_HOURS at
# the latest; every command it runs is bounded (the watch by COUNT x EVERY
# and TIMEOUT).
#
# Settings: KEY=VALUE lines in /etc/fabtrack/ras-watchdog.conf (or the file
# named by FABTRACK_RAS_WATCHDOG_CONF); '#' starts a comment; nothing is
# evaluated. Each can be overridden by FABTRACK_RAS_WATCHDOG_<KEY>.
#   FABTRACK=fabtrack      the fabtrack binary (its database: FABTRACK_DB or --db in DB)
#   DB=                    conninfo for --db (empty: fabtrack's default)
#   CLUSTER=               --cluster (empty: FABTRACK_CLUSTER, else Slurm's cluster name)
#   AFTER=3600             seconds before the first watch: the expected step time
#   INTERVAL=600           seconds between watches afterwards
#   EVERY=30 COUNT=3       snapshots per watch and seconds between them
#   TIMEOUT=15             seconds per RAS query
#   RAS_HOST=localhost RAS_PORT=28028
#   HOSTS_FILE=            the job's "IP name" lines; empty: made from
#                          SLURM_JOB_NODELIST with scontrol and getent
#   ALERT_COMMAND=logger -t fabtrack-ras   run once per stuck job, the summary as arguments
#   MAX_HOURS=168          give up after this long
#   SCONTROL=scontrol
#   RUN_DIR=/run/fabtrack  where --prolog keeps the watchdogs' PID files
set -uo pipefail

KEYS=(FABTRACK DB CLUSTER AFTER INTERVAL EVERY COUNT TIMEOUT RAS_HOST RAS_PORT HOSTS_FILE
  ALERT_COMMAND MAX_HOURS SCONTROL RUN_DIR)
FABTRACK=fabtrack DB='' CLUSTER='' AFTER=3600 INTERVAL=600 EVERY=30 COUNT=3 TIMEOUT=15
RAS_HOST=localhost RAS_PORT=28028 HOSTS_FILE='' ALERT_COMMAND='logger -t fabtrack-ras'
MAX_HOURS=168 SCONTROL=scontrol RUN_DIR=/run/fabtrack

log() {
  echo "fabtrack-ras-watchdog: $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t fabtrack-ras-watchdog -- "$*"
  return 0
}

# shellcheck source=hook-conf.sh
. "$(dirname "$(readlink -f "$0")")/hook-conf.sh"
read_hook_conf "${FABTRACK_RAS_WATCHDOG_CONF:-/etc/fabtrack/ras-watchdog.conf}" FABTRACK_RAS_WATCHDOG_
for key in AFTER INTERVAL COUNT RAS_PORT MAX_HOURS; do
  [[ ${!key} =~ ^[0-9]+$ ]] || { log "$key=${!key}: not a whole number"; exit 2; }
done

# batch: started by the batch script (ends with it); --prolog/--epilog:
# from slurmd; --detached: the watchdog that --prolog starts.
mode="batch"
case ${1:-} in
  '') ;;
  --prolog) mode=prolog ;;
  --epilog) mode=epilog ;;
  --detached) mode=detached ;;
  *)
    log "usage: $0 [--prolog | --epilog]"
    exit 2
    ;;
esac
job=${SLURM_JOB_ID:-}
[[ $job =~ ^[0-9_]+$ ]] || { log "no SLURM_JOB_ID: run it inside the job or its prolog"; exit 2; }
pid_file=$RUN_DIR/ras-watchdog.$job.pid
# The Prolog and Epilog get the job's nodes as SLURM_NODELIST only.
nodelist=${SLURM_JOB_NODELIST:-${SLURM_NODELIST:-}}

if [[ $mode == epilog ]]; then
  [[ -r $pid_file ]] || exit 0
  pid=$(<"$pid_file")
  if [[ $pid =~ ^[0-9]+$ ]] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null |
    grep -q 'fabtrack-ras-watchdog'; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -f "$pid_file"
  exit 0
fi

if [[ $mode == prolog ]]; then
  # One watchdog per job, on its first node (the batch host), as Slurm
  # names its nodes (which need not be the host name).
  first=$(timeout 30 "$SCONTROL" show hostnames "$nodelist" 2>/dev/null | head -n 1)
  [[ -n $first && $first == "${SLURMD_NODENAME:-$(hostname -s)}" ]] || exit 0
  mkdir -p "$RUN_DIR" || exit 0
  # slurmd kills the Prolog's process group when it exits: wait for the
  # watchdog's word (fd 3) that it runs in a session of its own.
  if ! read -r -t 10 _ < <(setsid "$(readlink -f "$0")" --detached 3>&1 </dev/null >/dev/null 2>&1); then
    log "job $job: the detached watchdog did not start"
  fi
  exit 0
fi
if [[ $mode == detached ]]; then
  echo "$$" >"$pid_file.tmp" && mv -f "$pid_file.tmp" "$pid_file"
  echo started >&3
  exec 3>&-
fi
[[ -n $CLUSTER ]] || CLUSTER=${FABTRACK_CLUSTER:-${SLURM_CLUSTER_NAME:-}}
[[ -n $CLUSTER ]] || { log "no cluster: set CLUSTER (or FABTRACK_CLUSTER)"; exit 2; }

# Under proctrack/cgroup Slurm ends a batch script's watchdog with SIGKILL,
# with everything else left in the batch step: its EXIT trap never removes
# its work directory. So each watchdog names its own by its PID and first
# removes this user's that belong to no running watchdog.
for dir in "${TMPDIR:-/tmp}"/fabtrack-ras-watchdog.*.*; do
  [[ -d $dir && ! -L $dir && -O $dir ]] || continue
  pid=${dir##*/fabtrack-ras-watchdog.}
  pid=${pid%%.*}
  [[ $pid =~ ^[0-9]+$ ]] || continue
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'fabtrack-ras-watchdog' && continue
  rm -rf -- "$dir"
done
work=$(mktemp -d "${TMPDIR:-/tmp}/fabtrack-ras-watchdog.$$.XXXXXX") || exit 3
child=''
# shellcheck disable=SC2317  # run by the EXIT trap
on_exit() {
  [[ -n $child ]] && kill "$child" 2>/dev/null
  rm -rf "$work"
  if [[ $mode == detached && $(cat "$pid_file" 2>/dev/null) == "$$" ]]; then
    rm -f "$pid_file"
  fi
}
trap on_exit EXIT
# A TERM (scancel, the Epilog) ends the watchdog at once, even mid-watch.
trap 'exit 0' TERM INT

# RAS names processes by IP address: the job's nodes as "IP name" lines.
if [[ -z $HOSTS_FILE ]]; then
  HOSTS_FILE=$work/hosts
  : >"$HOSTS_FILE"
  if [[ -n $nodelist ]]; then
    while read -r node; do
      [[ -n $node ]] || continue
      getent ahostsv4 "$node" 2>/dev/null | awk -v n="$node" '!seen[$1]++ {print $1, n}' >>"$HOSTS_FILE"
    done < <(timeout 30 "$SCONTROL" show hostnames "$nodelist" 2>/dev/null)
  fi
fi

job_running() {
  # Without scontrol (a test, a container) the RAS answer alone decides.
  command -v "$SCONTROL" >/dev/null 2>&1 || return 0
  local out state
  out=$(timeout 30 "$SCONTROL" show job "$job" 2>&1)
  state=$(grep -o 'JobState=[A-Z_]*' <<<"$out" | head -n1)
  [[ -n $state ]] && { [[ $state == JobState=RUNNING ]]; return; }
  # A job purged from slurmctld (MinJobAge after its end) is unknown; any
  # other failure (slurmctld busy) leaves it to RAS.
  [[ $out != *"Invalid job id"* ]]
}

# Started from the batch script: the job ends when that shell does.
parent=$PPID
parent_alive() {
  [[ $mode == batch && -r /proc/$$/stat ]] || return 0
  local stat fields
  stat=$(<"/proc/$$/stat")
  read -r -a fields <<<"${stat##*) }"
  [[ ${fields[1]} == "$parent" ]]
}

# Sleeps SECONDS in slices, ending the watchdog when its batch script ended.
nap() {
  local left=$1 step
  while ((left > 0)); do
    step=$((left < 2 ? left : 2))
    sleep "$step" &
    child=$!
    wait "$child" 2>/dev/null
    child=''
    left=$((left - step))
    parent_alive || exit 0
  done
}

deadline=$((SECONDS + MAX_HOURS * 3600))
parent_alive || exit 0
nap "$AFTER"
args=(ras watch --job "$job" --cluster "$CLUSTER" --every "$EVERY" --count "$COUNT"
  --timeout "$TIMEOUT" --host "$RAS_HOST" --port "$RAS_PORT" --hosts-file "$HOSTS_FILE"
  --format json)
[[ -n $DB ]] && args+=(--db "$DB")
answered=0 # RAS answered a watch of this job
while ((SECONDS < deadline)) && job_running; do
  # In the background, so that a TERM is not held until the watch ends.
  "$FABTRACK" "${args[@]}" >"$work/watch.json" 2>"$work/watch.err" &
  child=$!
  wait "$child"
  status=$?
  child=''
  ((status <= 2)) && answered=1
  case $status in
    0) ;;
    1 | 2)
      # "unconfirmed": the database is away and cannot say whether an earlier
      # watch alerted this job; alerting again beats never alerting.
      if grep -qE '"alert": "(new|unconfirmed)"' "$work/watch.json"; then
        # fabtrack's one-line summary (the findings with their ranks' hosts,
        # GPUs and pids; no quotes in it, so grep can take it whole).
        summary=$(grep -o '"alert_summary": "[^"]*"' "$work/watch.json" | head -n 1 |
          sed 's/^"alert_summary": "//; s/"$//')
        [[ -n $summary ]] || summary="job $job on $CLUSTER: NCCL RAS alert (no summary)"
        log "$summary"
        # shellcheck disable=SC2086  # ALERT_COMMAND is a command line by design
        $ALERT_COMMAND "$summary" || log "ALERT_COMMAND failed (exit $?)"
      fi
      ;;
    3)
      log "no RAS verdict for job $job: $(head -n 1 "$work/watch.err")"
      # No snapshot at all. After RAS has answered: the job's NCCL is gone
      # (the job finished). Before it ever answered: NCCL may not be up yet
      # (a long data load before the first collective), so while scontrol
      # says the job runs, the next watch asks again; without scontrol the
      # RAS answer alone decides. Anything else (the database) is tried
      # again.
      if grep -q "no snapshot" "$work/watch.err"; then
        ((answered)) || ! command -v "$SCONTROL" >/dev/null 2>&1 && exit 0
      fi
      ;;
    *)
      log "fabtrack ras watch exit $status: $(head -n 1 "$work/watch.err")"
      ;;
  esac
  nap "$INTERVAL"
done
exit 0
