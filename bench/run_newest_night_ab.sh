#!/usr/bin/env bash
# Alternated old/new rounds of the analyzer's newest night (`analyze --no-store`)
# on one running embedded server holding a generated history (cluster
# "scale"; see run_analyzer_scale_bench.sh, which made it): both builds read
# the same database, so both must accept its schema. Prints per side the
# median wall, client CPU (user + sys) and server CPU (reaped backends), all
# rounds in brackets. Leaves r-old, r-new in the current directory.
# Usage: bench/run_newest_night_ab.sh OLD_BIN NEW_BIN DATA_DIR [rounds]
set -u
O=$1 N=$2 H=$3
shift 3
DB="host=$H/run port=5432 dbname=fabtrack user=fabtrack"
tck=$(getconf CLK_TCK)
server_cpu() { awk -v t="$tck" '{print ($16 + $17) / t}' "/proc/$(head -1 $H/data/postmaster.pid)/stat"; }
rm -f r-old r-new
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 0 $((${1:-5} - 1))); do
  if ((i % 2)); then sides="old new"; else sides="new old"; fi
  for s in $sides; do
    B=$O; [ $s = new ] && B=$N
    s0=$(server_cpu)
    /usr/bin/time -f "%e %U %S" -o t.$s $B analyze --db "$DB" --cluster scale --format json --no-store >/dev/null 2>&1
    sleep 0.3; s1=$(server_cpu)
    awk -v a=$s0 -v b=$s1 '{printf "%s %.2f %.2f\n", $1, $2 + $3, b - a}' t.$s >> r-$s
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for s in old new; do
  echo "$s wall $(cut -d' ' -f1 r-$s | med) ($(cut -d' ' -f1 r-$s | paste -sd' ')) client $(cut -d' ' -f2 r-$s | med) ($(cut -d' ' -f2 r-$s | paste -sd' ')) server $(cut -d' ' -f3 r-$s | med) ($(cut -d' ' -f3 r-$s | paste -sd' '))"
done
