# Sourced (not run) by the tests that run a throwaway single-host Slurm
# (scripts/nightly/slurm-single-host.sh) with a private embedded PostgreSQL:
# slurm_nightly_test.sh and slurm_ras_watchdog_test.sh.
#   slurm_test_init SOURCE_DIR FABTRACK [TOOL...]
#     sets src, fabtrack, slurm (the single-host script) and work (a temp
#     dir, its spool FABTRACK_SPOOL_DIR); defines fail; traps EXIT to print
#     the daemons' logs when the test failed, stop Slurm and the database
#     and remove work (kept with KEEP=1); fails unless root and the Slurm
#     tools, psql and each TOOL are found. Before stopping Slurm on a
#     failure it calls slurm_test_on_failure, after stopping it
#     slurm_test_after_stop, where the test defines them.
#   slurm_test_db       starts the database in work/db; sets db, defines q.
#   slurm_test_start    starts Slurm in work/slurm (the caller's
#                       SLURM_SINGLE_HOST_* settings reach it), exports SLURM_CONF.
# shellcheck shell=bash

slurm_test_cleanup() {
  local status=$?
  if ((status != 0)); then
    "$slurm" logs "$work/slurm" >&2 || true
    if declare -F slurm_test_on_failure >/dev/null; then slurm_test_on_failure; fi
  fi
  "$slurm" stop "$work/slurm" >/dev/null 2>&1 || true
  if declare -F slurm_test_after_stop >/dev/null; then slurm_test_after_stop; fi
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  [[ -n ${KEEP:-} ]] || rm -rf "$work"
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

slurm_test_init() {
  src=$(readlink -f "$1")
  fabtrack=$(readlink -f "$2")
  shift 2
  slurm=$src/scripts/nightly/slurm-single-host.sh
  work=$(mktemp -d)
  chmod 755 "$work" # the embedded server runs as an unprivileged user
  export FABTRACK_SPOOL_DIR=$work/spool
  trap slurm_test_cleanup EXIT
  [[ $(id -u) -eq 0 ]] || fail "needs root (slurmd, munged)"
  local tool
  for tool in sbatch srun sinfo scontrol slurmctld slurmd munged psql "$@"; do
    command -v "$tool" >/dev/null || fail "$tool not found: scripts/install-deps.sh installs slurm-wlm and munge"
  done
}

slurm_test_db() {
  "$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1 || fail "embedded PostgreSQL did not start"
  db="host=$work/db/run dbname=fabtrack user=fabtrack"
}
q() { psql "$db" -Atc "$1"; }

slurm_test_start() {
  "$slurm" start "$work/slurm" >/dev/null || fail "the single-host Slurm did not come up"
  export SLURM_CONF=$work/slurm/slurm.conf
}
