#!/usr/bin/env bash
# The GPU bundle (scripts/gpu-bundle.sh) runs the harness on a machine without
# Open MPI, libpq or libpqxx: in a private mount namespace where this
# machine's Open MPI (libraries, components, help texts, parameter files),
# hwloc's plugins, libpq, libpqxx and every other library the bundle carries
# are hidden, the harness
#   - cannot even start without the bundle's env.sh (the hiding works), and
#   - with it lacks no library (ldd), runs as an MPI singleton (no mpirun),
#     loads libmpi, libpqxx and Open MPI's components from the bundle, and
#     writes a complete result file that the bundle's `fabtrack parse` reads.
# Needs no GPU: the MPI backend runs; a harness built with NCCL takes the
# machine's libnccl (FABTRACK_NCCL_LIBDIR) as it would on the GPU machine.
# Usage: bundle_singleton_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bundle=$tmp/bundle

"$src/scripts/gpu-bundle.sh" --from-build "$build" --no-peer --out "$bundle" >"$tmp/bundle.log" 2>&1 ||
  { cat "$tmp/bundle.log"; echo "FAIL: gpu-bundle.sh"; exit 1; }
cat "$tmp/bundle.log"

nccl_dir=""
for d in "${FABTRACK_CUDA_ROOT:-/usr/local/cuda}/lib64" "${FABTRACK_CUDA_ROOT:-/usr/local/cuda}/lib"; do
  [[ -e $d/libnccl.so.2 ]] && { nccl_dir=$d; break; }
done

# Runs inside the namespace. Paths are resolved before hiding (the libraries
# are symbolic links to versioned files: the files themselves are covered).
cat >"$tmp/inside.sh" <<'EOF'
set -uo pipefail
bundle=$1 tmp=$2 nccl_dir=$3
mount --make-rprivate /
hidden=0
# Open MPI's and PMIx's folders, and hwloc's plugins (the GPU machine has none
# of them: hwloc must run without its plugin folder).
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi \
  /etc/openmpi /usr/lib/x86_64-linux-gnu/hwloc; do
  [[ -d $d ]] && mount -t tmpfs none "$d" && hidden=$((hidden + 1))
done
# Every library the bundle carries, under its soname and every other name
# (libpqxx-6.4.so is its own soname; libmpi.so.40 -> libmpi.so.40.30.4): the
# harness may take each only from the bundle, as on the GPU machine, which has
# none of them or another version. The patterns name those it must carry.
declare -A hide
carried=("$bundle"/lib/*)
for pattern in 'libmpi.so*' 'libmpi_cxx.so*' 'libopen-pal.so*' 'libopen-rte.so*' 'libpqxx-6.4.so' \
  'libpq.so*' 'libmca_common_*.so*' 'libhwloc.so*' 'libevent_*.so*' 'libpmix.so*' \
  'libldap-2.5.so*' 'liblber-2.5.so*' 'libunistring.so.2*' "${carried[@]##*/}"; do
  for f in /usr/lib/x86_64-linux-gnu/$pattern; do
    [[ -e $f ]] && hide[$(readlink -f "$f")]=1
  done
done
# All resolved first: once a library is covered, a tool that needs it fails.
for f in "${!hide[@]}"; do mount --bind /dev/null "$f" && hidden=$((hidden + 1)); done
echo "hid $hidden system paths"
harness=$bundle/bin/fabtrack-allreduce
args=(--backend mpi -b 8 -e 1M -f 4 -n 5 -w 1 -q --link-probe 0)

# Without env.sh it must not start: the system's libraries are gone.
if OMPI_MCA_ess_singleton_isolated=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  "$harness" "${args[@]}" >"$tmp/without.txt" 2>&1; then
  echo "FAIL: the harness ran without the bundle's env.sh: the system Open MPI was not hidden"
  exit 1
fi
echo "without env.sh: $(head -c 200 "$tmp/without.txt")"

[[ -n $nccl_dir ]] && export FABTRACK_NCCL_LIBDIR=$nccl_dir
source "$bundle/env.sh" || { echo "FAIL: env.sh"; exit 1; }
# What gpu-check.sh's preflight asks on the GPU machine: nothing missing.
ldd "$harness" "$bundle/bin/fabtrack" "$bundle"/ompi/lib/openmpi/*.so "$bundle"/lib/* >"$tmp/ldd.txt" 2>&1
if grep -q 'not found' "$tmp/ldd.txt"; then
  awk '/^\// {f = $1} /not found/ {print f, $1}' "$tmp/ldd.txt"
  echo "FAIL: libraries missing with only the bundle"; exit 1
fi
LD_DEBUG=libs LD_DEBUG_OUTPUT=$tmp/ld "$harness" "${args[@]}" --output "$tmp/run.json" \
  >"$tmp/run.txt" 2>&1 || { rc=$?; cat "$tmp/run.txt"; echo "FAIL: the singleton run exited $rc"; exit 1; }
cat "$tmp"/ld.* >"$tmp/ld.txt"
"$bundle/bin/fabtrack" parse "$tmp/run.json" >"$tmp/parsed.json" 2>"$tmp/parse.err" ||
  { cat "$tmp/parse.err"; echo "FAIL: the bundle's fabtrack parse"; exit 1; }
EOF

if [[ $(id -u) -eq 0 ]]; then ns=(unshare -m); else ns=(unshare -r -m); fi
"${ns[@]}" bash "$tmp/inside.sh" "$bundle" "$tmp" "$nccl_dir" || exit 1

status=0
for lib in libmpi.so.40 libopen-pal.so.40 libpqxx-6.4.so libpq.so.5; do
  if grep -q "calling init: $bundle/lib/$lib\$" "$tmp/ld.txt"; then
    echo "ok: $lib from the bundle"
  else
    echo "FAIL: $lib not loaded from $bundle/lib"
    status=1
  fi
done
if grep -q "calling init: $bundle/ompi/lib/openmpi/mca_ess_singleton.so" "$tmp/ld.txt"; then
  echo "ok: Open MPI's components from the bundle"
else
  echo "FAIL: mca_ess_singleton.so not opened from the bundle"
  status=1
fi
if grep -E "calling init: (/usr)?/lib/x86_64-linux-gnu/(openmpi|libmpi|libpq|libopen-)" "$tmp/ld.txt" | head -3 | grep .; then
  echo "FAIL: a system Open MPI or libpq file was opened"
  status=1
fi
python3 - "$tmp/run.json" "$tmp/parsed.json" <<'PY' || status=1
import json, sys
run_doc = json.load(open(sys.argv[1]))
parsed = json.load(open(sys.argv[2]))
rows = run_doc["results"]
sizes = [r["size_bytes"] for r in rows]
ok = sizes == [8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288]
ok = ok and all(r[h]["wrong"] == 0 for r in rows for h in ("oop", "ip"))
ok = ok and run_doc["run"]["status"] == "complete" and run_doc["run"]["ranks"] == 1
parsed_rows = [r for t in parsed[0]["tests"] for r in t["rows"]]
ok = ok and [r["size_bytes"] for r in parsed_rows] == sizes
print(("ok" if ok else "FAIL") + f": singleton result file: {len(rows)} sizes {sizes}, "
      f"status {run_doc['run']['status']}, parsed back {len(parsed_rows)} rows")
sys.exit(0 if ok else 1)
PY
exit $status
