#!/usr/bin/env bash
# Makes .gpu-bundle/: everything scripts/gpu-check.sh needs on a bare GPU
# machine that has CUDA and a pip NCCL but no Open MPI, libpq or libpqxx, no
# network and no installs (the lent device machine). Runs here, where those
# are installed:
#   bin/      fabtrack-allreduce and fabtrack (Release, NCCL backend, stripped)
#             and nccl-tests' all_reduce_perf built from its public source
#   lib/      every shared library they need that such a machine lacks: all of
#             ldd's answer except glibc's, the C++ runtime's and CUDA/NCCL's,
#             which must be the machine's own (its driver, its NCCL)
#   ompi/     Open MPI's components that a singleton opens, its help texts
#             and parameter files, laid out as under /usr so that OPAL_PREFIX
#             relocates them
#   env.sh    sourced there: library path, Open MPI relocation, the NCCL
#             found on that machine
#   MANIFEST  commits, versions and files
# The harness runs there as an MPI singleton (no mpirun, no orted): one GPU,
# one rank.
#
# Usage: scripts/gpu-bundle.sh [--from-build DIR] [--no-peer] [--out DIR]
#   --from-build DIR  take the binaries from an existing build tree instead
#                     of configuring build-gpu/ (the ctest bundle test does)
#   --no-peer         skip nccl-tests (it needs nvcc and the fetched source)
#   --out DIR         bundle folder (default .gpu-bundle)
# nccl-tests' source: NCCL_TESTS_SRC (a checkout) or NCCL_TESTS_GIT (a bare
# clone, default /work/.mirror/NVIDIA+nccl-tests/repo); it is exported into
# build-gpu/ (ignored), never into the tracked tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
from_build="" peer=1 out=.gpu-bundle
while (($#)); do
  case $1 in
    --from-build) from_build=$2; shift 2 ;;
    --no-peer) peer=0; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "gpu-bundle: unknown option $1" >&2; exit 2 ;;
  esac
done
cuda=${FABTRACK_CUDA_ROOT:-/usr/local/cuda}
limit_mib=60
die() { echo "gpu-bundle: $*" >&2; exit 1; }

# 1. The binaries.
if [[ -n $from_build ]]; then
  build=$from_build
else
  build="build-gpu"
  config=$(cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFABTRACK_WITH_NCCL=ON \
    -DFABTRACK_CUDA_ROOT="$cuda" -DFABTRACK_BUILD_TESTS=OFF -DFABTRACK_BUILD_BENCH=OFF 2>&1) ||
    die "cmake failed: $config"
  grep -q "NCCL backend ON" <<<"$config" || die "CUDA/NCCL not found under $cuda: NCCL backend OFF"
  cmake --build "$build" --target fabtrack-allreduce fabtrack -j"$(nproc)" >/dev/null
fi
harness=$build/app/fabtrack-allreduce
cli=$build/cli/fabtrack
[[ -x $harness && -x $cli ]] || die "no fabtrack-allreduce/fabtrack under $build"
ldd "$harness" | grep -q libnccl || echo "gpu-bundle: note: $harness has no NCCL backend (MPI only)"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$harness" "$cli" "$out/bin/"
# The build tree's RUNPATH names this machine's folders (CUDA, Open MPI) and
# ends in an empty entry, which the loader reads as the current directory
# (LD_DEBUG=libs shows it): removed, so that env.sh alone says where libraries
# come from (CMake's own file(RPATH_REMOVE), no patchelf needed).
rpath_script=$(mktemp --suffix=.cmake)
trap 'rm -f "$rpath_script"' EXIT
# shellcheck disable=SC2016 # a CMake variable, expanded by cmake -P
echo 'file(RPATH_REMOVE FILE "${F}")' >"$rpath_script"
for f in "$out/bin/fabtrack-allreduce" "$out/bin/fabtrack"; do
  cmake -DF="$f" -P "$rpath_script" >/dev/null
done
strip "$out/bin/fabtrack-allreduce" "$out/bin/fabtrack"

# 2. Open MPI, relocatable. The components are the ones a singleton opens
# here (seen with LD_DEBUG), less the PSM transports (their libraries are for
# Intel/QLogic fabrics); a missing component is skipped by Open MPI, so a
# smaller set only narrows what it can choose.
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
ompi_pkgdatadir=$(ompi_info --path pkgdatadir --parsable 2>/dev/null | sed -n 's/^path:pkgdatadir://p')
ompi_sysconfdir=$(ompi_info --path sysconfdir --parsable 2>/dev/null | sed -n 's/^path:sysconfdir://p')
[[ -d $ompi_pkglibdir ]] || die "Open MPI not found (ompi_info); run scripts/install-deps.sh"
mkdir -p "$out/ompi/lib/openmpi" "$out/ompi/share/openmpi" "$out/ompi/etc"
trace=$(mktemp)
trap 'rm -f "$rpath_script" "$trace"' EXIT
OMPI_MCA_ess_singleton_isolated=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  LD_DEBUG=files "$harness" --backend mpi -b 8 -e 8 -n 1 -w 0 -q --link-probe 0 2>"$trace" >/dev/null ||
  die "the harness does not run as a singleton here"
components=$(grep -o "file=$ompi_pkglibdir/mca_[^ ]*\.so" "$trace" | sed 's/^file=//' | sort -u |
  grep -v -E '/mca_mtl_psm2?\.so$' || true)
[[ -n $components ]] || die "no Open MPI component seen in a singleton run"
for c in $components; do cp "$c" "$out/ompi/lib/openmpi/"; done
cp -r "$ompi_pkgdatadir/." "$out/ompi/share/openmpi/"
cp "$ompi_sysconfdir"/*.conf "$out/ompi/etc/" 2>/dev/null || true

# 3. The shared libraries of all of it, by soname, the real file copied.
# Left to the machine: glibc, the C++ runtime (a newer one there serves our
# binaries), CUDA's and NCCL's (they must match the driver and be the NCCL
# under test), hwloc's plugins (GL/OpenCL/XML back ends a singleton can do
# without; hwloc runs without its plugin folder).
keep_machine='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libnccl|libnvidia-[a-z-]*)\.so'
copy_deps() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname path; do
    [[ $soname =~ $keep_machine ]] && continue
    [[ -e $out/lib/$soname ]] && continue
    cp -L "$path" "$out/lib/$soname"
  done
}
for f in "$out"/bin/fabtrack* "$out"/ompi/lib/openmpi/*.so; do copy_deps "$f"; done
# The libraries' own needs (ldd already lists the closure; this catches
# libraries only components or other libraries pull in).
for f in "$out"/lib/*.so*; do copy_deps "$f"; done
chmod u+w "$out"/lib/*
strip --strip-unneeded "$out"/lib/* "$out"/ompi/lib/openmpi/*.so 2>/dev/null || true
# Nothing missing with only the bundle and the CUDA/NCCL folders on the path
# (a library found here only through a RUNPATH would be).
missing=$(LD_LIBRARY_PATH="$out/lib:$cuda/lib64" ldd "$out"/bin/fabtrack* "$out"/ompi/lib/openmpi/*.so \
  "$out"/lib/* | awk '/^\// {f = $1} /not found/ {print f, $1}') || die "ldd failed on the bundle"
[[ -z $missing ]] || die "libraries not found for the bundle: $missing"

# 4. nccl-tests' programs: all_reduce_perf (the side-by-side peer) and the
# collectives `fabtrack sweep --bench nccl-tests` runs there; Hopper code
# only (sm_90), no MPI (one GPU, launched without a launcher).
peer_commit="(not built)"
if ((peer)); then
  src=${NCCL_TESTS_SRC:-}
  if [[ -z $src ]]; then
    git_dir=${NCCL_TESTS_GIT:-/work/.mirror/NVIDIA+nccl-tests/repo}
    [[ -d $git_dir ]] || die "no nccl-tests source: set NCCL_TESTS_SRC or NCCL_TESTS_GIT (or --no-peer)"
    peer_commit=$(git --git-dir="$git_dir" rev-parse HEAD)
    src=$root/build-gpu/nccl-tests-$peer_commit
    if [[ ! -d $src ]]; then
      mkdir -p "$src"
      git --git-dir="$git_dir" archive HEAD | tar -x -C "$src"
    fi
  else
    peer_commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo "$src")
  fi
  peer_build=$src/build
  # NCCL_TESTS_PROGRAMS picks others: the device carries 64 MiB, so the
  # collectives gpu-check does not run are bundled apart for
  # scripts/gpu-record-collectives.sh (e.g. "reduce_perf gather_perf
  # scatter_perf hypercube_perf alltoallv_perf").
  read -r -a programs <<<"${NCCL_TESTS_PROGRAMS:-all_reduce_perf all_gather_perf \
reduce_scatter_perf alltoall_perf broadcast_perf sendrecv_perf}"
  for program in "${programs[@]}"; do
    if [[ ! -x $peer_build/$program ]]; then
      make -C "$src/src" -j"$(nproc)" MPI=0 CUDA_HOME="$cuda" NCCL_HOME="$cuda" \
        NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$peer_build" \
        "$peer_build/$program" >>"$src/build.log" 2>&1 ||
        die "nccl-tests build of $program failed (see $src/build.log)"
    fi
    cp "$peer_build/$program" "$out/bin/"
    strip "$out/bin/$program"
  done
fi

# 5. env.sh, read on the GPU machine.
cat >"$out/env.sh" <<'EOF'
# Sourced on the GPU machine: source .gpu-bundle/env.sh (made by
# scripts/gpu-bundle.sh). Finds that machine's NCCL, puts the bundle's
# libraries first, and points Open MPI at its relocated files.
fabtrack_bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Where a library lies on this machine: the CUDA toolkit, then the Python
# packages (PyTorch's pip NCCL and cuBLAS: nvidia-nccl-cu13, nvidia-cublas),
# then the system. Prints its folder, or nothing.
fabtrack_find_lib() {
  local d f
  for d in ${CUDA_HOME:-/usr/local/cuda}/lib64 ${CUDA_HOME:-/usr/local/cuda}/lib \
    $(python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null) \
    /usr/lib/x86_64-linux-gnu; do
    f=$(find -L "$d" -maxdepth 5 -name "$1*" -print -quit 2>/dev/null)
    [[ -n $f ]] && { dirname "$f"; return; }
  done
}
fabtrack_nccl_dir=${FABTRACK_NCCL_LIBDIR:-$(fabtrack_find_lib libnccl.so.2)}
fabtrack_nccl_files=("$fabtrack_nccl_dir"/libnccl.so.2*)
if [[ -z $fabtrack_nccl_dir || ! -e ${fabtrack_nccl_files[0]} ]]; then
  if grep -q libnccl.so.2 "$fabtrack_bundle/bin/fabtrack-allreduce"; then
    echo "fabtrack bundle: no libnccl.so.2 found (set FABTRACK_NCCL_LIBDIR)" >&2
    return 1 2>/dev/null || exit 1
  fi
  fabtrack_nccl_dir=$fabtrack_bundle/lib  # a harness built without NCCL needs none
fi
[[ -e $fabtrack_nccl_dir/libnccl.so.2 || $fabtrack_nccl_dir == "$fabtrack_bundle/lib" ]] || {
  # A versioned file alone gets the soname link the loader looks for.
  mkdir -p /tmp/fabtrack-nccl && ln -sf "${fabtrack_nccl_files[0]}" /tmp/fabtrack-nccl/libnccl.so.2
  fabtrack_nccl_dir=/tmp/fabtrack-nccl
}
# The CUDA runtime the harness was linked with and the cuBLAS its step mode
# loads (13.x, dlopen by soname, so through this path): the
# toolkit's when it has them, else the pip packages'.
fabtrack_cuda_dirs=""
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13; do
  d=$(fabtrack_find_lib "$lib")
  if [[ -z $d ]]; then
    echo "fabtrack bundle: warning: $lib not found on this machine" >&2
  elif [[ ":$fabtrack_nccl_dir:$fabtrack_cuda_dirs:" != *":$d:"* ]]; then
    fabtrack_cuda_dirs=${fabtrack_cuda_dirs:+$fabtrack_cuda_dirs:}$d
  fi
done
export LD_LIBRARY_PATH=$fabtrack_bundle/lib:$fabtrack_nccl_dir${fabtrack_cuda_dirs:+:$fabtrack_cuda_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Open MPI 4.1 relocation (read by libopen-pal at start). Debian configured
# it with absolute paths (libdir, pkglibdir, sysconfdir are not under
# ${prefix}), so OPAL_PREFIX alone moves nothing. Measured with the system's
# Open MPI hidden: OPAL_PKGLIBDIR (or the component path below, either one) is
# needed to find the components; OPAL_PKGDATADIR only for the help texts of
# error messages; OPAL_SYSCONFDIR for openmpi-mca-params.conf; the others
# keep any path Open MPI derives inside the bundle. No PMIx: an isolated
# singleton uses Open MPI's own pmix_isolated component.
export OPAL_PREFIX=$fabtrack_bundle/ompi
export OPAL_LIBDIR=$fabtrack_bundle/lib
export OPAL_PKGLIBDIR=$fabtrack_bundle/ompi/lib/openmpi
export OPAL_DATADIR=$fabtrack_bundle/ompi/share
export OPAL_PKGDATADIR=$fabtrack_bundle/ompi/share/openmpi
export OPAL_SYSCONFDIR=$fabtrack_bundle/ompi/etc
export OMPI_MCA_mca_base_component_path=$fabtrack_bundle/ompi/lib/openmpi
# Needed: without it the singleton starts an orted, which the bundle lacks.
export OMPI_MCA_ess_singleton_isolated=1
# Only mpirun refuses root; set in case a launcher is used as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export FABTRACK_NCCL_LIBDIR=$fabtrack_nccl_dir
EOF

# 6. MANIFEST and the size check.
{
  echo "fabtrack $(git -C "$root" rev-parse HEAD)$(git -C "$root" diff --quiet || echo ' (with uncommitted changes)')"
  echo "nccl-tests $peer_commit"
  echo "built $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ompi_info --version 2>/dev/null | head -1)"
  echo "NCCL at build time: $(grep -m1 -o 'NCCL_VERSION_CODE [0-9]*' "$cuda/include/nccl.h" 2>/dev/null || echo unknown)"
  echo
  (cd "$out" && find . -type f -printf '%s\t%P\n' | sort -k2)
} >"$out/MANIFEST"
size_kib=$(du -sk "$out" | cut -f1)
echo "gpu-bundle: $out: $((size_kib / 1024)) MiB, $(find "$out" -type f | wc -l) files"
((size_kib <= limit_mib * 1024)) || die "$out is over $limit_mib MiB: it must travel in a 64 MiB tree"
