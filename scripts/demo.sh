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
# Each example is one night's output; its date is in the file name.
for f in examples/lab-cluster/*.txt; do
  night=$(basename "$f" | cut -c1-10)
  $fabtrack ingest "$f" --cluster lab --at "${night}T02:00:00Z" --tag source=demo
done
echo
$fabtrack runs list --cluster lab
