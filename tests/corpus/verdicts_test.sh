#!/usr/bin/env bash
# Issue 16: every result and log fixture through parse → ingest → analyze,
# one cluster each, against the verdicts a person expects of it, kept beside
# the fixtures (tests/fixtures/expected_verdicts.tsv: file, ingest exit,
# analyze exit, the warning/critical findings as SEVERITY:kind). The rows
# were drafted from a run of this code and then each checked against what
# the file shows (a FAILED trailer, a socket fallback across nodes, a lost
# GDR, a retry-exceeded completion error, a healthy run); a row that
# disagreed with the file would have been a bug. Also: no command crashes (exit
# 4 or a signal), and the HTML report renders every window (its exit is the
# analysis's).
# Usage: tests/corpus/verdicts_test.sh SOURCE_DIR FABTRACK
set -uo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d)
chmod 755 "$work"
export FABTRACK_SPOOL_DIR=$work/spool XDG_DATA_HOME=$work/xdg XDG_STATE_HOME=$work/state
cleanup() {
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1 || { echo "FAIL: db start"; exit 1; }
db="host=$work/db/run dbname=fabtrack user=fabtrack"
expected=$src/tests/fixtures/expected_verdicts.tsv
failures=0
checked=0
n=0
while IFS=$'\t' read -r file want_ingest want_analyze want_findings; do
  [[ -z $file || $file == \#* ]] && continue
  n=$((n + 1))
  cluster=corpus$n
  "$fabtrack" ingest --db "$db" --cluster "$cluster" --at 2026-12-01T02:00:00Z \
    "$src/tests/fixtures/$file" >"$work/ingest.out" 2>&1
  got_ingest=$?
  "$fabtrack" analyze --db "$db" --cluster "$cluster" --since 2026-01-01T00:00:00Z --format json \
    >"$work/analyze.json" 2>"$work/analyze.err"
  got_analyze=$?
  got_findings=$(python3 - "$work/analyze.json" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception:
    print("?"); sys.exit()
kinds = sorted({f["severity"][0].upper() + ":" + f["kind"] for f in doc.get("findings", [])
                if f["severity"] != "info"})
print(",".join(kinds) or "-")
PY
)
  [[ $got_analyze == 3 && ! -s $work/analyze.json ]] && got_findings=-  # nothing to analyze
  "$fabtrack" analyze --db "$db" --cluster "$cluster" --since 2026-01-01T00:00:00Z --format html \
    >"$work/report.html" 2>"$work/html.err"
  got_html=$?
  problems=()
  [[ $got_ingest == "$want_ingest" ]] || problems+=("ingest exit $got_ingest, expected $want_ingest")
  [[ $got_analyze == "$want_analyze" ]] || problems+=("analyze exit $got_analyze, expected $want_analyze")
  [[ $got_findings == "$want_findings" ]] || problems+=("findings $got_findings, expected $want_findings")
  ((got_ingest < 4 && got_analyze < 4)) || problems+=("a command crashed")
  if [[ $want_analyze != 3 ]]; then
    [[ $got_html == "$got_analyze" ]] || problems+=("html exit $got_html: $(head -c 200 "$work/html.err")")
    grep -q '</html>' "$work/report.html" || problems+=("no HTML report")
  fi
  checked=$((checked + 1))
  if ((${#problems[@]})); then
    failures=$((failures + 1))
    echo "FAIL $file: ${problems[*]}"
  else
    echo "ok   $file: ingest $got_ingest, analyze $got_analyze, $got_findings"
  fi
done <"$expected"
# Every fixture of these folders has a row: a new fixture needs its verdict.
for f in "$src"/tests/fixtures/{nccl_tests,nccl_logs,cli}/*.{txt,log,json}; do
  [[ -e $f ]] || continue
  rel=${f#"$src/tests/fixtures/"}
  grep -q "^$rel"$'\t' "$expected" || { echo "FAIL $rel: no row in expected_verdicts.tsv"; failures=$((failures + 1)); }
done
echo "corpus: $checked fixtures checked, $failures with other verdicts"
((failures == 0 && checked > 30))
