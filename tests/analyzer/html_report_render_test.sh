#!/usr/bin/env bash
# Renders the analyzer's HTML report of a labelled scenario (35 nights, busbw
# 15% down at 8 nodes, port errors on one host) in headless Chromium and looks
# at what came out: the screenshot must show tonight's curves (red), the
# history bands (light blue), the history/trend lines (blue) and the critical
# and warning badges in their colours; the rendered DOM must hold the verdict
# line and the problem rows. Then the training section: absent from that report (no step-mode
# runs), present in a report with a judged step sweep, where the screenshot
# must show the compute (light green) and exposed communication (light red)
# areas under the step line (blue). Chromium missing is a failure, not a skip.
# Usage: html_report_render_test.sh TEST_BINARY
set -euo pipefail
test_binary=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v chromium >/dev/null || fail "chromium not installed (scripts/install-deps.sh installs it)"

FABTRACK_REPORT_OUT=$work/report.html "$test_binary" --gtest_filter=HtmlReport.ScenarioReport >/dev/null ||
  fail "report test failed"
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$work/profile")
timeout 120 "${chrome[@]}" --screenshot="$work/report.png" --window-size=1280,2600 \
  "file://$work/report.html" >"$work/chrome.log" 2>&1 || { cat "$work/chrome.log"; fail "chromium screenshot"; }
timeout 120 "${chrome[@]}" --dump-dom "file://$work/report.html" >"$work/dom.html" 2>/dev/null ||
  fail "chromium --dump-dom"

rows=$(grep -o 'class="problem"' "$work/dom.html" | wc -l)
((rows >= 2)) || fail "rendered DOM has $rows problem rows"
grep -q '<p class="verdict critical">CRITICAL: ' "$work/dom.html" || fail "no verdict line in the rendered page"
grep -q "busbw_regression" "$work/dom.html" || fail "busbw_regression finding not in the rendered page"

# name colour:tolerance minimum-pixels
checks=("tonight d62728:12 1500" "band d2e3f0:10 1500" "history 1f77b4:12 3000"
  "critical c0392b:8 500" "warning e08e0b:8 500")
read -r -a colours <<<"$(for c in "${checks[@]}"; do set -- $c; printf '%s ' "$2"; done)"
python3 "$here/png_colors.py" "$work/report.png" "${colours[@]}" >"$work/counts"
for c in "${checks[@]}"; do
  set -- $c
  hex=${2%%:*}
  got=$(awk -v h="$hex" '$1 == h {print $2}' "$work/counts")
  echo "$1 ($hex): $got pixels"
  ((got >= $3)) || fail "$1 colour $hex: $got pixels < $3 (the SVG did not render?)"
done
total=$(python3 - "$work/report.png" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
print(struct.unpack(">II", d[16:24])[0] * struct.unpack(">II", d[16:24])[1])
PY
)
echo "report rendered: $rows problems, screenshot of $total pixels"

grep -q 'id="training"' "$work/dom.html" && fail "training section in a report without step runs"
FABTRACK_REPORT_OUT=$work/training.html "$test_binary" --gtest_filter=HtmlReport.TrainingReport \
  >/dev/null || fail "training report test failed"
timeout 120 "${chrome[@]}" --screenshot="$work/training.png" --window-size=1280,2400 \
  "file://$work/training.html" >"$work/chrome.log" 2>&1 || { cat "$work/chrome.log"; fail "chromium screenshot (training)"; }
timeout 120 "${chrome[@]}" --dump-dom "file://$work/training.html" >"$work/training-dom.html" 2>/dev/null ||
  fail "chromium --dump-dom (training)"
grep -q '<h2 id="training">Training step: what the network costs</h2>' "$work/training-dom.html" ||
  fail "no training section in the rendered page with step runs"
step_rows=$(grep -o '<tr class="step">' "$work/training-dom.html" | wc -l)
((step_rows == 4)) || fail "rendered training table has $step_rows step rows, not 4"
grep -q 'GPU-hours lost per 1000 steps</b>' "$work/training-dom.html" || fail "no lost GPU-hours line"
training_checks=("compute d1ead1:10 15000" "exposed f6cfd0:10 8000" "step 1f77b4:12 800")
read -r -a colours <<<"$(for c in "${training_checks[@]}"; do set -- $c; printf '%s ' "$2"; done)"
python3 "$here/png_colors.py" "$work/training.png" "${colours[@]}" >"$work/training-counts"
for c in "${training_checks[@]}"; do
  set -- $c
  hex=${2%%:*}
  got=$(awk -v h="$hex" '$1 == h {print $2}' "$work/training-counts")
  echo "training $1 ($hex): $got pixels"
  ((got >= $3)) || fail "training $1 colour $hex: $got pixels < $3 (the step chart did not render?)"
done
echo "training section rendered: $step_rows step runs"
