#!/usr/bin/env bash
# Issue 18: `fabtrack parse` takes folders (every regular file in it, sorted,
# not its subfolders) and globs (sorted matches); a glob that matches nothing
# is an input error (exit 1) naming the pattern. Output is quiet on stderr
# when stderr is not a terminal (no progress line).
# Usage: tests/parse/parse_inputs_test.sh SOURCE_DIR FABTRACK
set -uo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/parse-inputs.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
fx=$src/tests/fixtures
mkdir -p "$work/runs/sub"
cp "$fx/nccl_tests/t12_three_tables_one_file.txt" "$work/runs/b-night.txt"
cp "$fx/nccl_tests/t05_allreduce_openmpi_tagged_info_interleaved.txt" "$work/runs/a-night.txt"
cp "$fx/nccl_logs/roce_gdr_disabled_nccl2.19.log" "$work/runs/c.log"
cp "$fx/nccl_tests/t06_allreduce_newest_16rank_pci_ids.txt" "$work/runs/sub/skipped.txt"

"$fabtrack" parse --format text "$work/runs" >"$work/out" 2>"$work/err"
rc=$?
check "folder exits 0" '[[ $rc == 0 ]]'
check "folder lists its files sorted, not its subfolder" \
  '[[ "$(grep -o "^[^ ]*: [0-9]* table" "$work/out" | sed "s/: .*//" | xargs -n1 basename | tr "\n" " ")" == "a-night.txt b-night.txt c.log " ]]'
check "quiet stderr when not a terminal" '[[ ! -s $work/err ]]'

"$fabtrack" parse --format json "$work/runs/*.txt" >"$work/out.json" 2>"$work/err"
rc=$?
check "glob exits 0" '[[ $rc == 0 ]]'
check "glob matches in sorted order, valid JSON" \
  '[[ "$(python3 -c "import json,sys,os; print(\" \".join(os.path.basename(f[\"file\"]) for f in json.load(open(sys.argv[1]))))" "$work/out.json")" == "a-night.txt b-night.txt" ]]'

"$fabtrack" parse --format json "$work/runs/*.nothing" >"$work/out" 2>"$work/err"
rc=$?
check "glob without match exits 1" '[[ $rc == 1 ]]'
check "glob without match is named" 'grep -q "runs/\*.nothing: no file matches" "$work/err"'

"$fabtrack" parse --format text "$work/runs/c.log" "$work/runs" >"$work/out" 2>"$work/err"
check "files and folders mix in argument order" \
  '[[ "$(grep -c "c.log:" "$work/out")" == 2 && "$(head -1 "$work/out" | cut -d: -f1 | xargs basename)" == c.log ]]'
# Many tables per file, each file's tests streamed as they are finished: 3000
# tables in each of two large files, with a three-table file between them,
# come out complete, in input order, each file's tests closed before its log
# facts (many 1 MB writes per file).
python3 -c 'import sys; open(sys.argv[2], "w").write(open(sys.argv[1]).read() * 1000)' \
  "$fx/nccl_tests/t12_three_tables_one_file.txt" "$work/many-1.txt"
cp "$work/many-1.txt" "$work/many-3.txt"
cp "$fx/nccl_tests/t12_three_tables_one_file.txt" "$work/many-2.txt"
"$fabtrack" parse --format json "$work/many-1.txt" "$work/many-2.txt" "$work/many-3.txt" \
  >"$work/many.json" 2>"$work/err"
check "many tables: every one, in order, per file" \
  '[[ "$(python3 -c "
import json, sys
doc = json.load(open(sys.argv[1]))
ok = all([t[\"lines\"][0] for t in f[\"tests\"]] == sorted(t[\"lines\"][0] for t in f[\"tests\"]) and
         \"nccl_version\" in f for f in doc)
print([len(f[\"tests\"]) for f in doc], ok)" "$work/many.json")" == "[3000, 3, 3000] True" ]]'
exit $fail
