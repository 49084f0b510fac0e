#!/usr/bin/env bash
# The main job end to end on the embedded default: install dependencies, build,
# start the private PostgreSQL, ingest the example runs kept in examples/, and
# show what was stored. Safe to run again: the same content is stored once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
fabtrack=build/cli/fabtrack
$fabtrack db start
$fabtrack ingest examples/lab-cluster --cluster lab --tag source=demo
echo
$fabtrack runs list --cluster lab
