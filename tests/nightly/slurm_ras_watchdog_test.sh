#!/usr/bin/env bash
# scripts/slurm/fabtrack-ras-watchdog.sh under a real Slurm: a throwaway
# single-host cluster (scripts/nightly/slurm-single-host.sh, with this
# test's Prolog and Epilog) runs sbatch jobs whose "training" is the RAS
# stand-in (tests/support/ras_stand_in.py, one srun step listening on a free
# port) and the real fabtrack stores into a private embedded PostgreSQL.
# The watchdog is installed as an admin would (the script and hook-conf.sh
# copied to one directory), set up by a conf file with short times, and
# wired both ways its header documents:
#  - in the batch script, `... &` before the srun: a stuck job is alerted
#    exactly once (ALERT_COMMAND appends a line to a file) although it is
#    watched several times, its snapshots and verdict are stored with the
#    job's real SLURM_JOB_ID (and Slurm's cluster name), and the watchdog is
#    gone within seconds of the job's end (proctrack/linuxproc, as here,
#    does not kill what the batch script leaves behind); a healthy job is
#    watched and not alerted; a job that ends before AFTER is never watched
#    and takes its watchdog with it;
#  - from the Prolog and Epilog, running the two lines the header documents,
#    verbatim (the Prolog first exports the conf file's name: slurmd passes
#    the job's environment to neither): the Prolog returns at once, the
#    watchdog runs in a session of its own on the job's node, alerts a stuck
#    job once and ends with the job; a short job is never watched; without
#    the Epilog line it still ends when scontrol shows the job over, though
#    a RAS still answers on its port (as the node's next job's would).
# VARIANT cgroup runs Slurm as production clusters mostly do instead:
# proctrack/cgroup and task/cgroup (cgroup v1), PrologFlags=Alloc,Contain,
# and two nodes (two slurmd on this host): Slurm kills what the batch script
# leaves behind when it ends (SIGKILL: the watchdog's own cleanup never
# runs, so the next watchdog removes the work directories of dead ones); the
# Prolog runs outside the job's cgroup, so its watchdog outlives the Prolog
# and is still running when the Epilog begins (the Epilog line is what stops
# it); a 2-node job gets one watchdog, on its first node, and one alert. It
# runs the cases where the two differ: a stuck and a short job from the
# batch script, a stuck 2-node job from the Prolog.
# Fails (never skips) when something is missing, printing the daemons' logs
# and the jobs' output.
# Usage: tests/nightly/slurm_ras_watchdog_test.sh SOURCE_DIR FABTRACK [linuxproc|cgroup]
set -euo pipefail
# shellcheck source=slurm_test_lib.sh
. "$(dirname "$0")/slurm_test_lib.sh"
python=/usr/bin/python3
slurm_test_init "$1" "$2" setsid pgrep "$python"
variant=${3:-linuxproc}
[[ $variant == linuxproc || $variant == cgroup ]] || fail "unknown variant $variant"
slurm_test_on_failure() {
  local f
  for f in "$work"/jobs/*.out; do
    [[ -e $f ]] || continue
    echo "----- $f" >&2
    tail -n 30 "$f" >&2
  done
}
# Whatever this test started that outlived its job (a watchdog that should
# have ended, a stand-in): by PID, only processes naming $work.
slurm_test_after_stop() {
  local pid
  for pid in $(pgrep -f "$work/" || true); do
    kill "$pid" 2>/dev/null || true
  done
}
slurm_test_db
"$fabtrack" db migrate --db "$db" >/dev/null || fail "db migrate"

# The watchdog as installed on a node: the script and the file it sources.
mkdir -p "$work/bin" "$work/jobs" "$work/run" "$work/tmp"
cp "$src/scripts/slurm/fabtrack-ras-watchdog.sh" "$src/scripts/slurm/hook-conf.sh" "$work/bin/"
watchdog=$work/bin/fabtrack-ras-watchdog.sh
printf '#!/bin/sh\necho "$*" >>%s/alerts\n' "$work" >"$work/bin/alert.sh"
chmod 755 "$work/bin/alert.sh"
: >"$work/alerts"

# The wiring lines as documented in the script's header, pointed at this
# install; the README must show the same lines.
documented() {
  local line
  line=$(sed -n "s|^#  *$1 script: *||p" "$src/scripts/slurm/fabtrack-ras-watchdog.sh")
  [[ -n $line ]] || fail "no '$1 script:' line in the watchdog's header"
  grep -qF -- "$line" "$src/README.md" || fail "README does not show the documented $1 line: $line"
  echo "${line//\/usr\/local\/sbin\//$work/bin/}"
}
batch_line=$(sed -n 's|^#  *\(/usr/local/sbin/fabtrack-ras-watchdog.sh &\)$|\1|p' \
  "$src/scripts/slurm/fabtrack-ras-watchdog.sh")
[[ -n $batch_line ]] || fail "no batch-script line ('... &') in the watchdog's header"
batch_line=${batch_line//\/usr\/local\/sbin\//$work/bin/}
# Slurm's Prolog and Epilog: the documented lines when $work/prolog-on
# exists (the second half of the test), last in the Prolog (slurmd kills the
# Prolog's process group as it exits: nothing after the line gives a
# detaching child time), and skipped in the Epilog while $work/epilog-off
# exists. Each node (several slurmd share this host in the cgroup variant)
# has its own RUN_DIR, as it would on its own host. The Epilog notes, per
# node, whether the watchdog was still running when it began.
prolog_line=$(documented Prolog)
epilog_line=$(documented Epilog)
cat >"$work/bin/Prolog.sh" <<SCRIPT
#!/bin/bash
[[ -e $work/prolog-on ]] || exit 0
export FABTRACK_RAS_WATCHDOG_CONF=$work/watchdog.conf
export FABTRACK_RAS_WATCHDOG_RUN_DIR=$work/run/\$SLURMD_NODENAME
date +%s.%N >$work/jobs/Prolog-start.\$SLURM_JOB_ID.\$SLURMD_NODENAME
$prolog_line
SCRIPT
cat >"$work/bin/Epilog.sh" <<SCRIPT
#!/bin/bash
[[ -e $work/prolog-on && ! -e $work/epilog-off ]] || exit 0
export FABTRACK_RAS_WATCHDOG_CONF=$work/watchdog.conf
export FABTRACK_RAS_WATCHDOG_RUN_DIR=$work/run/\$SLURMD_NODENAME
pid_file=\$FABTRACK_RAS_WATCHDOG_RUN_DIR/ras-watchdog.\$SLURM_JOB_ID.pid
# What the Epilog finds: the watchdog still running; gone by itself (it saw
# scontrol say the job is over before a loaded slurmd ran the Epilog: its
# EXIT trap removed the PID file); or killed with the job (a SIGKILL leaves
# the PID file behind).
if [[ -s \$pid_file ]]; then
  if kill -0 "\$(<"\$pid_file")" 2>/dev/null; then echo running; else echo killed; fi
else
  echo ended
fi >$work/jobs/Epilog-saw.\$SLURM_JOB_ID.\$SLURMD_NODENAME
$epilog_line
date +%s.%N >$work/jobs/Epilog-end.\$SLURM_JOB_ID.\$SLURMD_NODENAME
SCRIPT
chmod 755 "$work/bin/Prolog.sh" "$work/bin/Epilog.sh"

extra="Prolog=$work/bin/Prolog.sh\nEpilog=$work/bin/Epilog.sh"
cgroup='' nodes=1
if [[ $variant == cgroup ]]; then
  cgroup=1 nodes=2
  extra+="\nPrologFlags=Alloc,Contain"
fi
SLURM_SINGLE_HOST_CGROUP=$cgroup SLURM_SINGLE_HOST_NODES=$nodes SLURM_SINGLE_HOST_EXTRA=$extra \
  slurm_test_start
cluster=$(sed -n 's/^ClusterName=//p' "$SLURM_CONF")

free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# submit NAME MODE SECONDS AFTER WIRING [PORT [DELAY [NODES]]]: a job whose
# training is the stand-in in MODE (frozen: stuck; healthy; none: `sleep`,
# RAS answering on PORT from outside) for SECONDS, watched after AFTER s;
# WIRING batch puts the documented line in the batch script; the training
# starts DELAY s after the batch script (NCCL, and so RAS, up late); NODES
# (1) nodes, the one
# stand-in on the first (RAS answers on every node; one port here). Sets job,
# job_nodes and first (its nodes, the first of them), wd_pid (its watchdog),
# watchdogs (the most Prolog-started ones seen at once), started and ended
# (epoch seconds: the batch script began, the test saw the job over), once
# the job has finished.
submit() {
  local name=$1 mode=$2 seconds=$3 after=$4 wiring=$5 port=${6:-} delay=${7:-0} nodes=${8:-1}
  local out state nodelist i pid_files pid n
  [[ -n $port ]] || port=$(free_port)
  cat >"$work/watchdog.conf" <<CONF
# the test's watchdog: short times, the stand-in's port, the private database
FABTRACK=$fabtrack
DB=$db
AFTER=$after
INTERVAL=2
EVERY=0.5
COUNT=2
TIMEOUT=2
RAS_HOST=127.0.0.1
RAS_PORT=$port
ALERT_COMMAND=$work/bin/alert.sh
MAX_HOURS=1
CONF
  {
    echo '#!/bin/bash'
    echo "date +%s.%N >$work/jobs/started.\$SLURM_JOB_ID"
    if [[ $wiring == batch ]]; then
      echo "export TMPDIR=$work/tmp"
      echo "$batch_line"
      echo "echo \$! >$work/jobs/watchdog.\$SLURM_JOB_ID"
    fi
    ((delay > 0)) && echo "sleep $delay"
    if [[ $mode == none ]]; then
      echo "srun -N1 -n1 sleep $seconds"
    else
      echo "srun -N1 -n1 timeout $seconds $python $src/tests/support/ras_stand_in.py $mode $work/jobs/port.\$SLURM_JOB_ID $port"
    fi
    echo 'exit 0'
  } >"$work/jobs/$name.sh"
  job=$(FABTRACK_RAS_WATCHDOG_CONF=$work/watchdog.conf sbatch --parsable -N "$nodes" --chdir="$work/jobs" \
    --output="$work/jobs/$name.out" "$work/jobs/$name.sh") || fail "$name: sbatch failed"
  job=${job%%;*}
  [[ $job =~ ^[0-9]+$ ]] || fail "$name: sbatch did not submit: $job"
  # The watchdog's PID: from the batch script, or the Prolog's PID file
  # (one, in the first node's RUN_DIR).
  wd_pid='' first='' job_nodes='' watchdogs=0
  for ((i = 0; i < 300; i++)); do
    out=$(scontrol show job "$job")
    state=$(grep -o 'JobState=[A-Z]*' <<<"$out" | head -n 1)
    nodelist=$(grep -o ' NodeList=[^ ]*' <<<"$out" | head -n 1)
    nodelist=${nodelist#*=}
    if [[ -z $first && -n $nodelist && $nodelist != "(null)" ]]; then
      job_nodes=$(scontrol show hostnames "$nodelist")
      first=$(head -n 1 <<<"$job_nodes")
    fi
    if [[ $wiring == prolog ]]; then
      # Detached watchdogs lead their sessions (their subshells do not).
      n=0
      for pid in $(pgrep -f "$watchdog --detached" || true); do
        [[ $(ps -o sid= -p "$pid" | tr -d ' ') == "$pid" ]] && n=$((n + 1))
      done
      ((n <= watchdogs)) || watchdogs=$n
    fi
    if [[ -z $wd_pid ]]; then
      pid_files=("$work"/run/*/ras-watchdog."$job".pid)
      if [[ $wiring == batch && -s $work/jobs/watchdog.$job ]]; then
        wd_pid=$(<"$work/jobs/watchdog.$job")
      elif [[ $wiring == prolog && -s ${pid_files[0]} ]]; then
        ((${#pid_files[@]} == 1)) || fail "$name: a watchdog on more than one node: ${pid_files[*]}"
        [[ ${pid_files[0]} == "$work/run/$first/ras-watchdog.$job.pid" ]] ||
          fail "$name: the watchdog is not on the job's first node $first: ${pid_files[0]}"
        wd_pid=$(<"${pid_files[0]}")
        [[ $(ps -o sid= -p "$wd_pid" | tr -d ' ') == "$wd_pid" ]] ||
          fail "$name: the Prolog's watchdog (pid $wd_pid) is not in a session of its own"
      fi
    fi
    case $state in
      JobState=PENDING | JobState=CONFIGURING | JobState=RUNNING | JobState=COMPLETING) ;;
      *) break ;;
    esac
    sleep 0.2
  done
  [[ $state == JobState=COMPLETED ]] || fail "$name: job $job ended $state, want COMPLETED"
  ended=$(date +%s.%N)
  [[ -s $work/jobs/started.$job ]] || fail "$name: the batch script of job $job did not run"
  started=$(<"$work/jobs/started.$job")
  [[ -n $wd_pid ]] || fail "$name: no watchdog seen for job $job ($wiring wiring)"
  [[ $wiring == batch ]] || ((watchdogs == 1)) ||
    fail "$name: $watchdogs watchdogs at once for job $job, want 1"
}

# gone NAME SECONDS: the job's watchdog ended within SECONDS of the job (it
# naps in 2 s slices; a watch is bounded by COUNT x EVERY + TIMEOUT).
gone() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    kill -0 "$wd_pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -0 "$wd_pid" 2>/dev/null &&
    fail "$1: the watchdog (pid $wd_pid) of job $job outlived the job by $2 s: $(ps -o pid,ppid,etimes,args -p "$wd_pid" | tail -n 1)"
  [[ -z $(pgrep -f "$watchdog" || true) ]] ||
    fail "$1: watchdogs still running after job $job ended: $(pgrep -af "$watchdog")"
  return 0
}
# left NAME: the work directories (in the batch scripts' TMPDIR) of
# watchdogs that are gone. linuxproc: none, each removes its own as it ends;
# cgroup: Slurm SIGKILLs a batch-script watchdog with its batch step, so at
# most the last one's, which the next watchdog to start removes.
left() {
  local dirs=("$work"/tmp/fabtrack-ras-watchdog.*) most=0
  [[ -e ${dirs[0]} ]] || dirs=()
  [[ $variant == cgroup ]] && most=1
  ((${#dirs[@]} <= most)) ||
    fail "$1: ${#dirs[@]} work directories of ended watchdogs left behind (at most $most): ${dirs[*]}"
}
alerts_for() { grep -c "^job $1 " "$work/alerts" || true; }
snapshots_of() { q "SELECT count(*) FROM ras_snapshots WHERE job_id = '$1' AND cluster = '$cluster'"; }

echo "--- batch-script wiring: a stuck job is alerted once and its watchdog ends with it"
submit stuck frozen 10 2 batch
gone stuck 6
left stuck
[[ $(alerts_for "$job") == 1 ]] || fail "stuck: want 1 alert for job $job, alerts: $(cat "$work/alerts")"
grep -q "^job $job on $cluster stuck (NCCL RAS, critical); .*1 of 4 ranks behind hold it: rank [0-9] on " "$work/alerts" ||
  fail "stuck: alert does not name the job, cluster and rank: $(cat "$work/alerts")"
((n = $(snapshots_of "$job"), n >= 4)) ||
  fail "stuck: want >= 4 snapshots of job $job (2 watches or more), got $n"
# The job was found stuck (first_stuck_at, the alert's key); the newest
# verdict may be a last watch's single snapshot taken as the job ended.
[[ $(q "SELECT first_stuck_at IS NOT NULL FROM ras_job_verdicts
        WHERE job_id = '$job' AND cluster = '$cluster'") == t ]] ||
  fail "stuck: no stuck verdict stored for job $job: $(q "SELECT job_id, health, stuck FROM ras_job_verdicts")"
echo "job $job: $n snapshots, alert: $(grep "^job $job " "$work/alerts")"

if [[ $variant == linuxproc ]]; then
  echo "--- batch-script wiring: RAS up only after the first watch; the stuck job still alerted"
  # The first watch (after 1 s) finds nothing listening: NCCL is not up yet,
  # the job runs, so the watchdog asks again instead of ending.
  submit late frozen 8 1 batch "" 4
  gone late 6
  left late
  [[ $(alerts_for "$job") == 1 ]] || fail "late: want 1 alert for job $job, alerts: $(cat "$work/alerts")"

  echo "--- batch-script wiring: a healthy job is watched, not alerted"
  submit healthy healthy 7 2 batch
  gone healthy 6
  left healthy
  [[ $(alerts_for "$job") == 0 ]] || fail "healthy: job $job alerted: $(cat "$work/alerts")"
  ((n = $(snapshots_of "$job"), n >= 2)) || fail "healthy: job $job not watched ($n snapshots)"
  [[ $(q "SELECT health || ':' || stuck FROM ras_job_verdicts WHERE job_id = '$job'") == healthy:false ]] ||
    fail "healthy: verdict of job $job: $(q "SELECT health, stuck FROM ras_job_verdicts WHERE job_id = '$job'")"
fi

echo "--- batch-script wiring: a job that ends before AFTER is never watched"
submit short frozen 1 10 batch
awk -v e="$ended" -v s="$started" 'BEGIN { exit !(e - s < 6) }' ||
  fail "short: job $job took $(awk -v e="$ended" -v s="$started" 'BEGIN { print e - s }') s"
gone short 3
left short
sleep 2
[[ $(snapshots_of "$job") == 0 && -z $(q "SELECT 1 FROM ras_job_verdicts WHERE job_id = '$job'") ]] ||
  fail "short: job $job, over before AFTER, was watched"

touch "$work/prolog-on"
echo "--- Prolog/Epilog wiring: the Prolog returns at once; a stuck job ($nodes node(s)) is alerted once"
# submit checks: one watchdog, on the job's first node.
submit prolog-stuck frozen 10 2 prolog "" 0 "$nodes"
for node in $job_nodes; do
  for f in Prolog-start Epilog-end; do
    [[ -s $work/jobs/$f.$job.$node ]] ||
      fail "prolog-stuck: no $f.$job.$node: the test's Prolog/Epilog did not run on $node"
  done
done
# The batch script starts once the Prolog has returned.
prolog_took=$(awk -v a="$(<"$work/jobs/Prolog-start.$job.$first")" -v s="$started" 'BEGIN { printf "%.2f", s - a }')
awk -v t="$prolog_took" 'BEGIN { exit !(t < 3) }' ||
  fail "prolog-stuck: the batch script began $prolog_took s after the Prolog did"
# The job's end did not take the watchdog (it is not in the job's cgroup
# under proctrack/cgroup): the Epilog line stops it, or it ended by itself
# on seeing the job over when the Epilog ran late (a loaded slurmd); a
# SIGKILL with the job's processes is the failure.
saw=$(cat "$work/jobs/Epilog-saw.$job.$first" 2>/dev/null)
[[ $saw == running || $saw == ended ]] ||
  fail "prolog-stuck: at the Epilog on $first the watchdog was ${saw:-not looked at} (killed with the job, not ended by itself or the Epilog)"
gone prolog-stuck 6
[[ -z $(find "$work/run" -name "ras-watchdog.$job.pid") ]] || fail "prolog-stuck: PID file left behind"
[[ $(alerts_for "$job") == 1 ]] || fail "prolog-stuck: want 1 alert for job $job, alerts: $(cat "$work/alerts")"
((n = $(snapshots_of "$job"), n >= 4)) || fail "prolog-stuck: want >= 4 snapshots of job $job, got $n"
[[ $(q "SELECT first_stuck_at IS NOT NULL FROM ras_job_verdicts
        WHERE job_id = '$job' AND cluster = '$cluster'") == t ]] ||
  fail "prolog-stuck: no stuck verdict stored for job $job"
echo "job $job on $(scontrol show job "$job" | grep -o ' NodeList=[^ ]*'): batch script began $prolog_took s after the Prolog, $n snapshots, 1 alert"

if [[ $variant == linuxproc ]]; then
  echo "--- Prolog/Epilog wiring: a job that ends before AFTER is never watched"
  submit prolog-short frozen 1 10 prolog
  awk -v e="$ended" -v s="$started" 'BEGIN { exit !(e - s < 6) }' ||
    fail "prolog-short: job $job took $(awk -v e="$ended" -v s="$started" 'BEGIN { print e - s }') s"
  gone prolog-short 3
  sleep 2
  [[ $(snapshots_of "$job") == 0 ]] || fail "prolog-short: job $job, over before AFTER, was watched"

  echo "--- Prolog wiring without the Epilog line: it ends when scontrol shows the job over,"
  echo "    though RAS still answers on its port (as the node's next job's would)"
  touch "$work/epilog-off"
  port=$(free_port)
  "$python" "$src/tests/support/ras_stand_in.py" frozen "$work/jobs/outside.port" "$port" \
    >"$work/jobs/outside.out" 2>&1 &
  outside=$!
  for ((i = 0; i < 50; i++)); do
    [[ -s $work/jobs/outside.port ]] && break
    sleep 0.1
  done
  [[ -s $work/jobs/outside.port ]] || fail "prolog-noepilog: the stand-in did not listen: $(cat "$work/jobs/outside.out")"
  submit prolog-noepilog none 5 2 prolog "$port"
  end_at=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
  gone prolog-noepilog 6
  kill "$outside"
  [[ -z $(find "$work/run" -name "ras-watchdog.$job.pid") ]] || fail "prolog-noepilog: PID file left behind"
  [[ $(alerts_for "$job") == 1 ]] || fail "prolog-noepilog: want 1 alert for job $job, alerts: $(cat "$work/alerts")"
  # A watch begun while the job ran may take its snapshots (COUNT x EVERY +
  # TIMEOUT: 3 s) after its end; none begins later.
  [[ $(q "SELECT count(*) FROM ras_snapshots WHERE job_id = '$job'
          AND taken_at > '$end_at'::timestamptz + interval '3 seconds'") == 0 ]] ||
    fail "prolog-noepilog: job $job watched after it ended"

fi

want=4
[[ $variant == linuxproc ]] || want=2
(($(wc -l <"$work/alerts") == want)) || fail "want $want alerts in all, got: $(cat "$work/alerts")"
echo "RAS watchdog under a real single-host Slurm: both wirings alert a stuck job once and end with it"
