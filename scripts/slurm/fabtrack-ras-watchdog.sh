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
#  - Or for every job, from the Prolog on the job's first node (the prolog
#    must return at once, so detach it):
#      [[ $(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1) == $(hostname -s) ]] &&
#        setsid /usr/local/sbin/fabtrack-ras-watchdog.sh </dev/null >/dev/null 2>&1 &
# It ends by itself when the job does (RAS stops answering, or scontrol no
# longer shows the job running) and after MAX_HOURS at the latest; every
# command it runs is bounded (the watch by COUNT x EVERY and TIMEOUT).
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
set -uo pipefail

KEYS=(FABTRACK DB CLUSTER AFTER INTERVAL EVERY COUNT TIMEOUT RAS_HOST RAS_PORT HOSTS_FILE
  ALERT_COMMAND MAX_HOURS SCONTROL)
FABTRACK=fabtrack DB='' CLUSTER='' AFTER=3600 INTERVAL=600 EVERY=30 COUNT=3 TIMEOUT=15
RAS_HOST=localhost RAS_PORT=28028 HOSTS_FILE='' ALERT_COMMAND='logger -t fabtrack-ras'
MAX_HOURS=168 SCONTROL=scontrol

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

job=${SLURM_JOB_ID:-}
[[ -n $job ]] || { log "no SLURM_JOB_ID: run it inside the job or its prolog"; exit 2; }
[[ -n $CLUSTER ]] || CLUSTER=${FABTRACK_CLUSTER:-${SLURM_CLUSTER_NAME:-}}
[[ -n $CLUSTER ]] || { log "no cluster: set CLUSTER (or FABTRACK_CLUSTER)"; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/fabtrack-ras-watchdog.XXXXXX") || exit 3
trap 'rm -rf "$work"' EXIT

# RAS names processes by IP address: the job's nodes as "IP name" lines.
if [[ -z $HOSTS_FILE ]]; then
  HOSTS_FILE=$work/hosts
  : >"$HOSTS_FILE"
  if [[ -n ${SLURM_JOB_NODELIST:-} ]]; then
    while read -r node; do
      [[ -n $node ]] || continue
      getent ahostsv4 "$node" 2>/dev/null | awk -v n="$node" '!seen[$1]++ {print $1, n}' >>"$HOSTS_FILE"
    done < <(timeout 30 "$SCONTROL" show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null)
  fi
fi

job_running() {
  # Without scontrol (a test, a container) the RAS answer alone decides.
  command -v "$SCONTROL" >/dev/null 2>&1 || return 0
  local state
  state=$(timeout 30 "$SCONTROL" show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n1)
  [[ -z $state || $state == JobState=RUNNING ]]
}

# Interruptible sleep: a TERM (the job's end, scancel) ends the watchdog at once.
nap() {
  sleep "$1" &
  wait $! 2>/dev/null
}
trap 'exit 0' TERM INT

deadline=$((SECONDS + MAX_HOURS * 3600))
nap "$AFTER"
args=(ras watch --job "$job" --cluster "$CLUSTER" --every "$EVERY" --count "$COUNT"
  --timeout "$TIMEOUT" --host "$RAS_HOST" --port "$RAS_PORT" --hosts-file "$HOSTS_FILE"
  --format json)
[[ -n $DB ]] && args+=(--db "$DB")
while ((SECONDS < deadline)) && job_running; do
  "$FABTRACK" "${args[@]}" >"$work/watch.json" 2>"$work/watch.err"
  status=$?
  case $status in
    0) ;;
    1 | 2)
      # "unconfirmed": the database is away and cannot say whether an earlier
      # watch alerted this job; alerting again beats never alerting.
      if grep -qE '"alert": "(new|unconfirmed)"' "$work/watch.json"; then
        reason=$(grep -o '"alert_reason": "[^"]*"' "$work/watch.json" | head -n 1 |
          sed 's/"alert_reason": //; s/"//g')
        summary="job $job on $CLUSTER ${reason:-stuck} (NCCL RAS): $(grep -o '"message": "[^"]*"' "$work/watch.json" |
          head -n 3 | sed 's/"message": //; s/"//g' | paste -sd ';' -)"
        log "$summary"
        # shellcheck disable=SC2086  # ALERT_COMMAND is a command line by design
        $ALERT_COMMAND "$summary" || log "ALERT_COMMAND failed (exit $?)"
      fi
      ;;
    3)
      log "no RAS verdict for job $job: $(head -n 1 "$work/watch.err")"
      # No snapshot at all: RAS does not answer, the job finished (or does
      # not use NCCL >= 2.24). Anything else (the database) is tried again.
      grep -q "no snapshot" "$work/watch.err" && exit 0
      ;;
    *)
      log "fabtrack ras watch exit $status: $(head -n 1 "$work/watch.err")"
      ;;
  esac
  nap "$INTERVAL"
done
exit 0
