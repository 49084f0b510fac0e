#!/usr/bin/env bash
# The nightly fabric check for clusters without Slurm: mpirun over a hostfile
# (or local ranks, or a custom launcher prefix), the analysis, the report. A
# lock keeps two nights from overlapping (a second start exits 75); output
# goes to a dated log under LOG_DIR, logs older than LOG_KEEP_DAYS are removed.
# Exit status: the analyzer's (0/1/2/3).
#   30 1 * * *  fabtrack  /opt/fabtrack/share/nightly/fabtrack-nightly-cron.sh
# Config: $FABTRACK_NIGHTLY_CONF, else /etc/fabtrack/nightly.conf.
set -uo pipefail
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$here/lib.sh"
nightly_load_config "${FABTRACK_NIGHTLY_CONF:-/etc/fabtrack/nightly.conf}"

mkdir -p "$NIGHTLY_LOG_DIR" || nightly_die "cannot create $NIGHTLY_LOG_DIR"
exec 9>"$NIGHTLY_LOG_DIR/.nightly.lock"
if ! flock -n 9; then
  echo "fabtrack-nightly: another night is still running (lock $NIGHTLY_LOG_DIR/.nightly.lock held)" >&2
  exit 75
fi
log=$NIGHTLY_LOG_DIR/nightly-$(date -u +%Y-%m-%d).log
find "$NIGHTLY_LOG_DIR" -maxdepth 1 -name 'nightly-*.log' -mtime +"$NIGHTLY_LOG_KEEP_DAYS" -delete
exec > >(tee -a "$log") 2>&1

launcher=()
case $NIGHTLY_LAUNCHER in
  hostfile) launcher=(--hostfile "$NIGHTLY_HOSTFILE") ;;
  local) launcher=() ;;
  *) launcher=(--mpirun "$NIGHTLY_LAUNCHER") ;;
esac
status=0
nightly_run "${launcher[@]}" || status=$?
echo "fabtrack-nightly: exit $status ($(date -u +%FT%TZ))"
exit "$status"
