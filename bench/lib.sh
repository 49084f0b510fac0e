# What the bench/run_*.sh scripts share; sourced from the repository root.

# bench_build TARGET...: configures build/ (Release) and builds TARGETs.
bench_build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j"$(nproc)" --target "$@" >/dev/null
}

# bench_database: a private embedded PostgreSQL in a new directory under /tmp,
# stopped and removed on exit. Sets dir (its data directory) and db (its
# connection string).
bench_database() {
  dir=$(mktemp -d /tmp/fabtrack-bench-XXXXXX)
  chmod 755 "$dir"
  trap 'build/cli/fabtrack db stop --data-dir "$dir" >/dev/null; rm -rf "$dir"' EXIT
  build/cli/fabtrack db start --data-dir "$dir" >/dev/null
  db="host=$dir/run port=5432 dbname=fabtrack user=fabtrack"
}

# bench_large_sysfs TREE: a large host's sysfs at TREE, the 8-HCA NDR fixture
# with a second port given to every HCA.
bench_large_sysfs() {
  cp -a tests/fixtures/sysfs/ndr_8hca "$1"
  local dev real
  for dev in "$1"/class/infiniband/*; do
    real=$(readlink -f "$dev")
    cp -a "$real/ports/1" "$real/ports/2"
  done
}

# bench_sysfs_tree NAME DIR: the named benchmark tree at DIR: cx7-16, cx7-64
# (ConnectX-7 HCAs with real values, saturated legacy counters included;
# tests/fixtures/sysfs/make_cx7_tree.sh), cx7-16-clean, cx7-64-clean (nothing
# saturated), cx7-16-nohw, cx7-64-nohw (the same without hw_counters/: the
# values node_exporter 1.5 reads and exports, so both sides do the same work),
# clean-16 (bench_large_sysfs).
bench_sysfs_tree() {
  local n
  case $1 in
    cx7-*-nohw) n=${1#cx7-}; tests/fixtures/sysfs/make_cx7_tree.sh "$2" "${n%-nohw}" && rm -r "$2"/devices/*/*/*/infiniband/*/ports/*/hw_counters ;;
    cx7-*-clean) n=${1#cx7-}; tests/fixtures/sysfs/make_cx7_tree.sh "$2" "${n%-clean}" clean ;;
    cx7-*) tests/fixtures/sysfs/make_cx7_tree.sh "$2" "${1#cx7-}" ;;
    clean-16) bench_large_sysfs "$2" ;;
    *) echo "unknown tree $1"; return 2 ;;
  esac
}
