#!/usr/bin/env bash
# A rank-0 node whose clock is off (libfaketime under mpirun: an hour ahead,
# then a day behind): the sweep places the run in the window this host
# launched it in, says so, and keeps the skew as a tag; a run on a good clock
# is left alone. Nights and baselines are by time, so a skewed run must not
# land in another night.
# Usage: tests/reliability/clock_skew_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d)
chmod 755 "$work"
export FABTRACK_SPOOL_DIR=$work/spool OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cleanup() {
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v faketime >/dev/null || fail "faketime (Debian package faketime) is needed"
"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1
db="host=$work/db/run dbname=fabtrack user=fabtrack"

sweep() {  # sweep CLUSTER [faketime offset]
  local launcher=mpirun
  # libfaketime is an LD_PRELOAD library: under ASan (scripts/sanitize.sh)
  # it comes before the ASan runtime, which ASan accepts when told so.
  [[ -n ${2:-} ]] && launcher="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 faketime -f $2 mpirun"
  timeout 120 "$fabtrack" sweep --db "$db" --cluster "$1" --nodes 1 --ranks-per-node 1 --ports off \
    --mpirun "$launcher" -- -b 8 -e 1K -f 8 -n 3 -w 1 >"$work/$1.log" 2>&1 ||
    { cat "$work/$1.log"; fail "sweep $1 failed"; }
}
check() {  # check CLUSTER SKEW_SECONDS|none
  local row
  row=$(psql "$db" -Atc "SELECT abs(extract(epoch FROM now() - started_at)) < 300,
                                coalesce(tags->>'clock_skew_s', 'none') FROM runs WHERE cluster = '$1'")
  local skew=${row#*|}
  [[ ${row%%|*} == t ]] || fail "$1: the run is not at this host's time ($row)"
  if [[ $2 == none ]]; then
    [[ $skew == none ]] || fail "$1: a good clock was marked skewed ($skew)"
  else
    ((skew > $2 - 60 && skew < $2 + 60)) || fail "$1: skew $skew, expected about $2"
    grep -q "rank 0's clock is" "$work/$1.log" || fail "$1: the sweep did not say so"
  fi
  echo "$1: recorded at this host's time, skew tag $skew"
}

sweep good
check good none
sweep ahead +3600s
check ahead 3600
sweep behind -86400s
check behind -86400
echo "clock skew: runs placed at the launcher's time"
