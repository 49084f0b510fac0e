#!/usr/bin/env bash
# scripts/check-layers.sh passes on the tree, and fails (naming file and line)
# on copies of it with one arrow against the flow each: the check can fail.
set -euo pipefail
src=$1
check=$src/scripts/check-layers.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
"$check" "$src" || fail "the tree has arrows against the flow (above)"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
inject() {  # inject FILE LINE: a copy of the layers with LINE prepended to FILE
  rm -rf "$work/tree"; mkdir -p "$work/tree"
  cp -r "$src"/{core,collector,store,analyzer,app,cli} "$work/tree/"
  sed -i "1i $2" "$work/tree/$1"
}
expect_caught() {  # expect_caught FILE LINE
  inject "$1" "$2"
  if out=$("$check" "$work/tree" 2>&1); then fail "not caught: $2 in $1"; fi
  grep -q "^$1:1:" <<<"$out" || fail "caught without naming $1:1: $out"
}
expect_caught store/spool.cc '#include "collector/parse/parse_file.h"'
expect_caught store/run_writer.h '#include "analyzer/analyze.h"'
expect_caught analyzer/analyze.cc '#include "store/spool.h"'
expect_caught collector/harness/link_probe.cc '#include "store/run_writer.h"'
expect_caught collector/parse/parse_file.cc '#include "app/batch_store.h"'
expect_caught core/model.cc '#include "analyzer/analyze.h"'
expect_caught cli/main.cc '#include <pqxx/pqxx>'
expect_caught cli/main.cc '#include "store/run_writer.h"'
echo "PASS: layering check passes on the tree and catches 8 injected arrows"
