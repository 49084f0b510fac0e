#!/usr/bin/env bash
# CPU-seconds of a fresh build, per compile and link (BENCHMARKS.md, "Fresh
# build CPU"). Wall time lies on a shared machine; user+system CPU of each
# compiler and linker process, summed, lies much less.
# Usage: bench/build_cpu.sh BUILD_DIR [TARGET...] [-- CMAKE_ARGS...]
#   bench/build_cpu.sh /tmp/fresh fabtrack fabtrack-allreduce
#   bench/build_cpu.sh /tmp/fresh-off fabtrack fabtrack-allreduce -- -DFABTRACK_UNITY=OFF
# BUILD_DIR must not exist (a fresh build, nothing cached: no ccache).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$1; shift
targets=(); cmake_args=()
while (($#)); do
  if [[ $1 == -- ]]; then shift; cmake_args=("$@"); break; fi
  targets+=("$1"); shift
done
[[ ! -e $dir ]] || { echo "build_cpu: $dir exists; a fresh build needs a new directory" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
launcher=$dir/cpu_time_launcher.sh
cat >"$launcher" <<'LAUNCHER'
#!/usr/bin/env bash
# Runs one compile or link, appending "user system output" to $FABTRACK_CPU_LOG.
out=unknown; prev=""
for a in "$@"; do [[ $prev == -o ]] && out=$a; prev=$a; done
exec /usr/bin/time -a -o "$FABTRACK_CPU_LOG" -f "%U %S $out" "$@"
LAUNCHER
chmod +x "$launcher"
export FABTRACK_CPU_LOG=$dir/cpu_seconds.log
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$src" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_LINKER_LAUNCHER="$launcher" \
  "${cmake_args[@]}" >"$dir/configure.log"
start=$(date +%s)
cmake --build "$dir" -j"$(nproc)" ${targets[@]+--target "${targets[@]}"} >"$dir/build.log"
wall=$(($(date +%s) - start))
awk -v wall="$wall" '
  /^[0-9]/ {
    cpu = $1 + $2
    if ($3 ~ /\.o$/) { compiles++; compile += cpu } else { links++; link += cpu }
    n = split($3, p, "/CMakeFiles/"); t = (n > 1) ? p[2] : $3; sub(/\.dir.*/, "", t)
    per[t] += cpu
  }
  END {
    printf "compiles: %d units, %.1f CPU-s\nlinks: %d, %.1f CPU-s\ntotal: %.1f CPU-s (wall %d s)\n",
           compiles, compile, links, link, compile + link, wall
    for (t in per) printf "  %8.1f  %s\n", per[t], t | "sort -rn | head -15"
  }' "$FABTRACK_CPU_LOG"
