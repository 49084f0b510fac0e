#!/usr/bin/env bash
# Shared by fabtrack-nightly.sbatch and fabtrack-nightly-cron.sh: reading the
# config (strictly: unknown keys and malformed lines are errors naming
# file:line) and the night itself (sweep, then analyze; when the analysis
# flags the sweep, `fabtrack locate` on the same hosts within LOCATE_BUDGET
# seconds and analyze again so that its verdict is a finding; exit with the
# analyzer's status).
# Exit codes: the analyzer's (0 ok, 1 warning, 2 critical, 3 could not
# analyze); 3 also for a bad config or a sweep that failed (after analyzing
# what was stored).

NIGHTLY_KEYS=(CLUSTER NODE_COUNTS RANKS_PER_NODE BACKEND MIN_BYTES MAX_BYTES STEP_FACTOR ITERS WARMUP
  EXTRA_HARNESS_FLAGS DB OUTPUT_DIR REPORT_DIR TEXTFILE PORTS SYSFS ANALYZE_CONFIG FABTRACK LAUNCHER
  HOSTFILE LOG_DIR LOG_KEEP_DAYS LOCATE LOCATE_BUDGET LOCATE_HOSTS LOCATE_TOPOLOGY LOCATE_FLAGGED_BY
  LOCATE_PROBE_FLAGS)

nightly_die() {
  echo "fabtrack-nightly: $*" >&2
  exit 3
}

# nightly_load_config FILE: sets the NIGHTLY_* variables (defaults first).
nightly_load_config() {
  local file=$1 line n=0 key value k known
  [[ -r $file ]] || nightly_die "cannot read config $file"
  NIGHTLY_NODE_COUNTS=1-2 NIGHTLY_RANKS_PER_NODE=1 NIGHTLY_BACKEND=mpi NIGHTLY_MIN_BYTES=8
  NIGHTLY_MAX_BYTES=128M NIGHTLY_STEP_FACTOR=2 NIGHTLY_ITERS=20 NIGHTLY_WARMUP=5
  NIGHTLY_EXTRA_HARNESS_FLAGS= NIGHTLY_DB= NIGHTLY_OUTPUT_DIR=/tmp/fabtrack-nightly
  NIGHTLY_REPORT_DIR=/tmp/fabtrack-nightly NIGHTLY_TEXTFILE= NIGHTLY_PORTS=auto NIGHTLY_SYSFS=/sys
  NIGHTLY_ANALYZE_CONFIG= NIGHTLY_FABTRACK=fabtrack NIGHTLY_LAUNCHER=hostfile NIGHTLY_HOSTFILE=
  NIGHTLY_LOG_DIR=/var/log/fabtrack NIGHTLY_LOG_KEEP_DAYS=14 NIGHTLY_CLUSTER=
  NIGHTLY_LOCATE=auto NIGHTLY_LOCATE_BUDGET=900 NIGHTLY_LOCATE_HOSTS= NIGHTLY_LOCATE_TOPOLOGY=
  NIGHTLY_LOCATE_FLAGGED_BY= NIGHTLY_LOCATE_PROBE_FLAGS=
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    line=${line%%#*}
    [[ $line =~ ^[[:space:]]*$ ]] && continue
    [[ $line =~ ^[[:space:]]*([A-Z_]+)=(.*)$ ]] || nightly_die "$file:$n: expected KEY=VALUE"
    key=${BASH_REMATCH[1]}
    value=${BASH_REMATCH[2]}
    value=${value%"${value##*[![:space:]]}"}
    known=0
    for k in "${NIGHTLY_KEYS[@]}"; do [[ $k == "$key" ]] && known=1; done
    ((known)) || nightly_die "$file:$n: unknown setting $key"
    printf -v "NIGHTLY_$key" '%s' "$value"
  done <"$file"
  [[ -n $NIGHTLY_CLUSTER ]] || nightly_die "$file: CLUSTER is required"
  [[ $NIGHTLY_RANKS_PER_NODE =~ ^[1-9][0-9]*$ ]] || nightly_die "$file: RANKS_PER_NODE must be a positive integer"
  [[ $NIGHTLY_ITERS =~ ^[1-9][0-9]*$ && $NIGHTLY_WARMUP =~ ^[0-9]+$ ]] ||
    nightly_die "$file: ITERS and WARMUP must be integers"
  [[ $NIGHTLY_BACKEND == nccl || $NIGHTLY_BACKEND == mpi ]] || nightly_die "$file: BACKEND must be nccl or mpi"
  [[ $NIGHTLY_LOCATE == auto || $NIGHTLY_LOCATE == off ]] || nightly_die "$file: LOCATE must be auto or off"
  [[ $NIGHTLY_LOCATE_BUDGET =~ ^[1-9][0-9]*$ ]] || nightly_die "$file: LOCATE_BUDGET must be a positive number of seconds"
  if [[ $NIGHTLY_DB == *password=* ]]; then
    nightly_die "$file: DB carries a password; use ~/.pgpass or PGPASSFILE instead"
  fi
}

# nightly_locate SINCE LAUNCHER_FLAGS...: `fabtrack locate --flagged-since
# SINCE` on the night's hosts (LOCATE_HOSTS, else the hostfile, else the
# Slurm allocation) with the sweep's launcher, stored for the cluster, within
# LOCATE_BUDGET seconds (and killed 60 s after it). Success (0) when a
# verdict was stored or spooled; it never changes the night's status itself.
nightly_locate() {
  local since=$1 fab=$NIGHTLY_FABTRACK db=() hosts=() launch=() extra=() out rc=0
  shift
  [[ $NIGHTLY_LOCATE == off ]] && return 1
  [[ -n $NIGHTLY_DB ]] && db=(--db "$NIGHTLY_DB")
  while (($#)); do
    case $1 in
      --hostfile) hosts=(--hostfile "$2"); shift 2 ;;
      --mpirun) launch=(--mpirun "$2"); shift 2 ;;
      --slurm) shift ;; # locate reads the allocation itself
      *) shift ;;
    esac
  done
  [[ -n $NIGHTLY_LOCATE_HOSTS ]] && hosts=(--hosts "$NIGHTLY_LOCATE_HOSTS")
  if ((${#hosts[@]} == 0)) && [[ -n $NIGHTLY_HOSTFILE && -z ${SLURM_JOB_NODELIST:-} ]]; then
    hosts=(--hostfile "$NIGHTLY_HOSTFILE")
  fi
  if ((${#hosts[@]} == 0)) && [[ -z ${SLURM_JOB_NODELIST:-} ]]; then
    echo "fabtrack-nightly: flagged, but no hosts to locate on (set LOCATE_HOSTS or HOSTFILE)"
    return 1
  fi
  if ((${#hosts[@]} == 0 && ${SLURM_JOB_NUM_NODES:-2} < 2)); then
    echo "fabtrack-nightly: flagged, but the allocation has one node: nothing to locate"
    return 1
  fi
  [[ -n $NIGHTLY_LOCATE_TOPOLOGY ]] && extra+=(--topology "$NIGHTLY_LOCATE_TOPOLOGY")
  [[ -n $NIGHTLY_LOCATE_FLAGGED_BY ]] && extra+=(--flagged-by "$NIGHTLY_LOCATE_FLAGGED_BY")
  mkdir -p "$NIGHTLY_OUTPUT_DIR/locate"
  echo "fabtrack-nightly: locating on the night's hosts (budget $NIGHTLY_LOCATE_BUDGET s)"
  # shellcheck disable=SC2086  # LOCATE_PROBE_FLAGS is a list of flags
  out=$(timeout --kill-after=30 $((NIGHTLY_LOCATE_BUDGET + 60)) "$fab" locate "${db[@]}" \
    --cluster "$NIGHTLY_CLUSTER" --flagged-since "$since" --budget "$NIGHTLY_LOCATE_BUDGET" \
    --work-dir "$NIGHTLY_OUTPUT_DIR/locate" "${hosts[@]}" "${launch[@]}" "${extra[@]}" \
    -- $NIGHTLY_LOCATE_PROBE_FLAGS 2>&1) || rc=$?
  echo "$out"
  echo "fabtrack-nightly: locate exited $rc"
  ((rc <= 2)) && [[ $out == *"verdict "*" for cluster "* || $out == *"verdict spooled"* ]]
}

# nightly_run LAUNCHER_FLAGS...: the sweep with the given launcher flags
# (--slurm, --hostfile F, --mpirun "...", or none for local ranks), then the
# analysis. Returns the night's exit status.
nightly_run() {
  local fab=$NIGHTLY_FABTRACK db=() sweep_status=0 status=0 night
  [[ -n $NIGHTLY_DB ]] && db=(--db "$NIGHTLY_DB")
  night=$(date -u +%Y-%m-%d)
  local since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  mkdir -p "$NIGHTLY_OUTPUT_DIR" "$NIGHTLY_REPORT_DIR"
  echo "fabtrack-nightly: $NIGHTLY_CLUSTER, node counts $NIGHTLY_NODE_COUNTS x $NIGHTLY_RANKS_PER_NODE, backend $NIGHTLY_BACKEND"
  # shellcheck disable=SC2086  # EXTRA_HARNESS_FLAGS is a list of flags
  "$fab" sweep "${db[@]}" --cluster "$NIGHTLY_CLUSTER" --nodes "$NIGHTLY_NODE_COUNTS" \
    --ranks-per-node "$NIGHTLY_RANKS_PER_NODE" --output-dir "$NIGHTLY_OUTPUT_DIR" \
    --ports "$NIGHTLY_PORTS" --sysfs "$NIGHTLY_SYSFS" "$@" -- \
    --backend "$NIGHTLY_BACKEND" -b "$NIGHTLY_MIN_BYTES" -e "$NIGHTLY_MAX_BYTES" \
    -f "$NIGHTLY_STEP_FACTOR" -n "$NIGHTLY_ITERS" -w "$NIGHTLY_WARMUP" $NIGHTLY_EXTRA_HARNESS_FLAGS ||
    sweep_status=$?
  ((sweep_status == 0)) || echo "fabtrack-nightly: sweep exited $sweep_status; analyzing what was stored"
  local analyze=("$fab" analyze "${db[@]}" --cluster "$NIGHTLY_CLUSTER" --since "$since")
  [[ -n $NIGHTLY_ANALYZE_CONFIG ]] && analyze+=(--config "$NIGHTLY_ANALYZE_CONFIG")
  local textfile=()
  [[ -n $NIGHTLY_TEXTFILE ]] && textfile=(--textfile "$NIGHTLY_TEXTFILE")
  "${analyze[@]}" "${textfile[@]}" || status=$?
  if ((status > 3)); then # not the analyzer's verdict: it could not run (126/127, a signal)
    echo "fabtrack-nightly: $fab analyze exited $status; could not analyze"
    status=3
  fi
  # A flagged night (scaling drop, busbw/latency regression, straggler):
  # locate the slow node or uplink on the same hosts while they are still
  # ours, then analyze again so that the verdict is a finding (and in the
  # textfile and the report).
  if ((status == 1 || status == 2)) && nightly_locate "$since" "$@"; then
    local again=0
    "${analyze[@]}" "${textfile[@]}" >/dev/null || again=$?
    if ((again <= 3)); then status=$again; fi
  fi
  # The report repeats the verdict (0-2); anything above is a failure of its
  # own (3: not written, 4: internal error) that must not pass as a quiet night.
  local report=$NIGHTLY_REPORT_DIR/$NIGHTLY_CLUSTER-$night.html report_status=0
  "${analyze[@]}" --no-store --format html --out "$report" || report_status=$?
  if ((report_status > 2)); then
    echo "fabtrack-nightly: the HTML report failed: $fab analyze --format html exited $report_status; $report not written"
    ((status < 3)) && status=3
  fi
  echo "fabtrack-nightly: analysis exit $status; report $report"
  if ((sweep_status != 0 && status < 3)); then status=3; fi
  return "$status"
}
