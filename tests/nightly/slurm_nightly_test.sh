#!/usr/bin/env bash
# The Slurm variant of the nightly job, end to end under a real Slurm: a
# throwaway single-host cluster (Debian's slurmctld/slurmd/munge, started by
# scripts/nightly/slurm-single-host.sh; one node, so node count 1) runs the
# real fabtrack-nightly.sbatch with `sbatch --wait`. The sweep launches
# fabtrack-allreduce ranks with srun (Open MPI direct launch through Slurm's
# mpi/pmix) and samples port counters on the node through srun too (a fake
# sysfs tree), stores into a private embedded PostgreSQL, analyzes, writes
# the report. Checked: the job's exit status (sbatch --wait and scontrol's
# ExitCode) is the analyzer's, the run is in PostgreSQL with the job's id and
# its port-counter bracket, the job log, report and textfile exist; a night
# with a critical finding ends the job with exit 2; a bad config, or a
# fabtrack that cannot run, with 3.
# Fails (never skips) when something is missing or does not work, printing
# the daemons' logs.
# Usage: tests/nightly/slurm_nightly_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
# shellcheck source=slurm_test_lib.sh
. "$(dirname "$0")/slurm_test_lib.sh"
slurm_test_init "$1" "$2"
sbatch_script=$src/scripts/nightly/fabtrack-nightly.sbatch
slurm_test_db
slurm_test_start
grep -q '^MpiDefault=pmix$' "$SLURM_CONF" ||
  fail "Slurm has no mpi/pmix plugin (srun --mpi=list: $(srun --mpi=list 2>&1 | tr '\n' ' '))"
host=$(hostname -s)

# The node's ports: the 8-HCA fixture with its one slow port (mlx5_3 at HDR)
# trained at NDR like its peers, so a clean night has nothing to flag.
cp -a "$src/tests/fixtures/sysfs/ndr_8hca" "$work/sysfs"
rate=$(readlink -f "$work/sysfs/class/infiniband/mlx5_3")/ports/1/rate
[[ -f $rate ]] || fail "fixture layout changed: no $rate"
echo "400 Gb/sec (4X NDR)" >"$rate"

# Two busy-polling ranks on a small shared CI machine measure its scheduler:
# latency jitter is not what this test judges.
printf '[latency_jitter]\nenabled = false\n' >"$work/analyze.conf"

conf=$work/nightly.conf
cat >"$conf" <<CONF
# test night under Slurm: the one node, 2 ranks (MPI over host memory/TCP)
CLUSTER=slurm-test
NODE_COUNTS=1
RANKS_PER_NODE=2
BACKEND=mpi
MIN_BYTES=8
MAX_BYTES=64K
STEP_FACTOR=8
ITERS=5
WARMUP=1
DB=$db
OUTPUT_DIR=$work/out
REPORT_DIR=$work/reports
TEXTFILE=$work/fabtrack.prom
PORTS=nodes
SYSFS=$work/sysfs
ANALYZE_CONFIG=$work/analyze.conf
FABTRACK=$fabtrack
CONF
# sbatch exports the environment (--export=ALL); the job runs a copy of the
# script from slurmd's spool, so it is told where lib.sh is.
export FABTRACK_NIGHTLY_CONF=$conf FABTRACK_NIGHTLY_LIB=$src/scripts/nightly
mkdir -p "$work/jobs"

# submit NAME: sbatch --wait the real script from $work/jobs; sets job and
# job_status, and job_log (the script's own --output, fabtrack-nightly-%j.log).
submit() {
  job_status=0
  timeout 100 sbatch --wait --parsable --nodes=1 --chdir="$work/jobs" "$sbatch_script" \
    >"$work/$1.sbatch" 2>&1 || job_status=$?
  job=$(head -n 1 "$work/$1.sbatch")
  job=${job%%;*}
  [[ $job =~ ^[0-9]+$ ]] || fail "$1: sbatch did not submit: $(cat "$work/$1.sbatch")"
  ((job_status != 124)) || fail "$1: job $job still running after 100 s"
  job_log=$work/jobs/fabtrack-nightly-$job.log
  [[ -s $job_log ]] || fail "$1: no job log $job_log"
}
# slurm_says JOB STATE EXIT: scontrol's record of the finished job.
slurm_says() {
  local info
  info=$(scontrol show job "$1") || fail "scontrol show job $1 failed"
  [[ $info =~ JobState=$2[[:space:]] && $info =~ [[:space:]]ExitCode=$3:0[[:space:]] ]] ||
    fail "job $1: want JobState=$2 ExitCode=$3:0, scontrol says: $(grep -oE '(JobState|ExitCode)=[^ ]+' <<<"$info" | tr '\n' ' ')"
}

echo "--- a night under Slurm: srun launches the ranks and samples the node's ports"
submit night1
tail -n 4 "$job_log"
grep -q "analysis exit $job_status;" "$job_log" ||
  { cat "$job_log"; fail "sbatch --wait exited $job_status, not the analyzer's status"; }
((job_status == 0)) || { cat "$job_log"; fail "a clean night exited $job_status, want 0"; }
slurm_says "$job" COMPLETED 0
[[ $(q "SELECT count(*) || ':' || min(nodes) || ':' || min(ranks) || ':' || min(slurm_job_id) || ':' || min(status)
        FROM runs WHERE cluster = 'slurm-test'") == "1:1:2:$job:complete" ]] ||
  fail "want 1 complete run (1 node, 2 ranks, job $job), got: $(q "SELECT nodes, ranks, slurm_job_id, status FROM runs WHERE cluster = 'slurm-test'")"
[[ $(q "SELECT count(DISTINCT s.phase) FROM port_counter_samples s JOIN ports p ON p.id = s.port_id
        JOIN runs r ON r.id = s.run_id WHERE r.cluster = 'slurm-test' AND p.host = '$host'") == 2 ]] ||
  { cat "$job_log"; fail "no before/after port samples of $host (srun counters snapshot)"; }
ls "$work"/reports/slurm-test-*.html >/dev/null 2>&1 || fail "no HTML report"
grep -q '^fabtrack_analysis_status{cluster="slurm-test"} 0' "$work/fabtrack.prom" || fail "no textfile"

echo "--- a night with a socket fallback: the job fails with exit 2"
"$fabtrack" ingest --db "$db" "$src/tests/fixtures/cli/allreduce_2node_ib.txt" --cluster slurm-test \
  --nccl-log "$src/tests/fixtures/nccl_logs/socket_fallback_4node_nccl2.12.log" \
  --at "$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)" >/dev/null 2>&1 || fail "ingest of the fallback fixture"
submit night2
((job_status == 2)) || { cat "$job_log"; fail "expected exit 2 (critical), got $job_status"; }
grep -q "analysis exit 2;" "$job_log" || fail "the job's status is not the analyzer's"
grep -q "socket_fallback" "$job_log" || fail "the critical finding is not in the job log"
slurm_says "$job" FAILED 2

echo "--- a bad config: exit 3 naming file:line"
printf 'CLUSTER=x\nNODE_COUTNS=1\n' >"$work/bad.conf"
FABTRACK_NIGHTLY_CONF=$work/bad.conf submit bad
((job_status == 3)) || fail "bad config exited $job_status, want 3"
grep -q "bad.conf:2: unknown setting NODE_COUTNS" "$job_log" || fail "message: $(cat "$job_log")"
slurm_says "$job" FAILED 3

echo "--- fabtrack missing on the node: exit 3 (could not analyze), not 127"
sed "s|^FABTRACK=.*|FABTRACK=$work/no-such-fabtrack|" "$conf" >"$work/nofab.conf"
FABTRACK_NIGHTLY_CONF=$work/nofab.conf submit nofab
((job_status == 3)) || { cat "$job_log"; fail "missing fabtrack exited $job_status, want 3"; }
slurm_says "$job" FAILED 3
echo "nightly sbatch job under a real single-host Slurm: runs, ports, report, exit status all behave"
