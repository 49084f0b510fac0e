#!/usr/bin/env bash
# Installs every Debian package fabtrack needs to build, test and run.
# Reused by the README, .ci/run and the Ansible roles: keep the list here only.
# Usage: scripts/install-deps.sh [--compile | --tests | --runtime-only | --demo |
#                                 --demo-compile | --demo-run]
#   (none)          everything: build, the whole test suite, CI
#   --compile       what configuring and compiling everything (tests included) needs
#   --tests         the rest of (none): the tools the tests run; scripts/test.sh
#                   installs these while it compiles
#   --runtime-only  what the built binaries need on a node
#   --demo          what scripts/demo.sh needs: build fabtrack and
#                   fabtrack-allreduce, run the embedded PostgreSQL, MPI and
#                   the netns fabric (no test tools, browsers, Slurm, Ansible)
#   --demo-compile  the part of --demo that configuring and compiling needs
#   --demo-run      the rest of --demo (the PostgreSQL server, mpirun, ip):
#                   scripts/demo.sh installs these while it compiles
set -euo pipefail

build_packages=(
  build-essential cmake pkg-config git
  ninja-build  # the generator scripts/test.sh and demo.sh use for a fresh build dir
  libpqxx-dev libpq-dev
  prometheus-cpp-dev  # tests: prometheus-cpp's serializer is the exposition oracle
  libcurl4-openssl-dev  # analyze --pushgateway (the push is plain HTTP PUT through libcurl)
  libcli11-dev
  nlohmann-json3-dev
  libssl-dev libyaml-dev libcrypt-dev  # counters serve --web.config.file: TLS, the YAML file, bcrypt
  libgtest-dev googletest
  libibverbs-dev libibumad-dev
  libibmad-dev libibnetdisc-dev  # fabric scan: subnet discovery and PMA MADs
  ibsim-utils libumad2sim0 opensm infiniband-diags  # tests/subnet: a simulated subnet, its SM, the diags compared in bench/
  openmpi-bin libopenmpi-dev
  postgresql-15 postgresql-client-15
  clang-format
  python3        # test scripts read result files
  prometheus     # promtool: lints the exporter output (and alert rules later)
  prometheus-pushgateway  # tests/cli/pushgateway_test.sh pushes to a real gateway
  apache2-utils  # htpasswd: the bcrypt hash of that gateway's basic-auth test
  curl           # tests scrape the exporter
  openssl        # the TLS test makes a self-signed CA
  ansible-core   # deployment roles in ansible/ (tested locally by ctest)
  ansible-lint   # tests/ansible/site_test.sh lints the roles
  prometheus-node-exporter  # the peer the port-counter benchmark is measured against
  chromium       # headless rendering test of the analyzer HTML report
  slurm-wlm munge  # the sbatch nightly job's test runs a throwaway single-host Slurm
  faketime       # the clock-skew test runs rank 0 on a clock an hour ahead / a day behind
  file dpkg-dev systemd  # tests/package: cpack's dpkg-shlibdeps (file finds the ELF files), systemd-analyze verify
)
runtime_packages=(
  libpqxx-6.4 libpq5 openmpi-bin libibverbs1 libibumad3 libcurl4 libibmad5 libibnetdisc5
  libssl3 libyaml-0-2 libcrypt1
  postgresql-15 postgresql-client-15
)

demo_compile_packages=(
  build-essential cmake pkg-config ninja-build
  libpqxx-dev libpq-dev libcurl4-openssl-dev libcli11-dev nlohmann-json3-dev
  libssl-dev libyaml-dev libcrypt-dev
  libibverbs-dev
  libopenmpi-dev
)
# PostgreSQL 15 brings LLVM (its JIT) and locales: a third of a fresh
# machine's unpacking, needed only when the demo starts its database.
demo_run_packages=(
  openmpi-bin
  postgresql-15
  iproute2  # ip, tc: scripts/netns-fabric.sh
)
demo_packages=("${demo_compile_packages[@]}" "${demo_run_packages[@]}")

# Configuring and compiling with tests and benchmarks (a subset of build_packages).
compile_packages=(
  build-essential cmake pkg-config git ninja-build
  libpqxx-dev libpq-dev prometheus-cpp-dev libcurl4-openssl-dev libcli11-dev
  nlohmann-json3-dev libssl-dev libyaml-dev libcrypt-dev libgtest-dev googletest
  libibverbs-dev libibumad-dev libibmad-dev libibnetdisc-dev openmpi-bin libopenmpi-dev
)

case "${1:-}" in
  "") packages=("${build_packages[@]}") ;;
  --compile) packages=("${compile_packages[@]}") ;;
  --tests)
    packages=()
    for p in "${build_packages[@]}"; do
      [[ " ${compile_packages[*]} " == *" $p "* ]] || packages+=("$p")
    done
    ;;
  --runtime-only) packages=("${runtime_packages[@]}") ;;
  --demo) packages=("${demo_packages[@]}") ;;
  --demo-compile) packages=("${demo_compile_packages[@]}") ;;
  --demo-run) packages=("${demo_run_packages[@]}") ;;
  *)
    echo "install-deps: unknown option '$1' (--compile, --tests, --runtime-only, --demo," \
      "--demo-compile or --demo-run)" >&2
    exit 2
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
apt_options=()
# The demo's packages are unpacked without an fsync per file (dpkg's
# --force-unsafe-io, as Debian's container images do): on a fresh VM that is
# 25-30% of the install (two rounds of the demo set in a fresh Debian 12
# chroot, alternated: 132-141 s against 188-200 s). What it risks is an empty or partly
# written file of a package being unpacked when the machine loses power
# during the install (reinstall that package then); the complete set (CI,
# test machines, the Ansible roles) is installed as usual.
if [[ ${1:-} == --demo* ]]; then apt_options=(-o Dpkg::Options::=--force-unsafe-io); fi
$sudo apt-get install -y -q --no-install-recommends "${apt_options[@]}" "${missing[@]}"
