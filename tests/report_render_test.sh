#!/usr/bin/env bash
# phaseloop's HTML reports looked at in a real browser (issue 18): a canary
# report written by `phaseloop canary report` from a checked-in state
# (testdata/report_state) is rendered by headless Chromium through
# tools/check_report.sh, which must find every chart drawn; then pages broken
# in each way the check knows must fail it, each with its reason, so the
# check is shown able to fail:
#   a. the fixture's report: 3 of 3 charts drew, nothing fetched, a PNG
#      screenshot;
#   b. broken pages: marks gone, a chart not laid out, a mark outside its
#      chart, a bar of no area, the check script gone, an image from the
#      network or from beside the page, a stylesheet from disk, the wrong
#      number of charts;
#   c. bad input and a machine without Chromium: exit 2, naming the fix.
# Needs Debian's chromium (tools/setup.sh installs it).
set -uo pipefail

phaseloop="" check="" state_json=""
while [ $# -gt 0 ]; do
  case "$1" in
    --phaseloop) phaseloop="$(realpath "$2")"; shift 2 ;;
    --check) check="$(realpath "$2")"; shift 2 ;;
    --state-json) state_json="$(realpath "$2")"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
# STATE/canaries/<id>/state.json
state_dir="$(dirname "$(dirname "$(dirname "$state_json")")")"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/report_render.XXXXXX")"

fail() { echo "FAIL: $*"; exit 1; }
step() { echo "== $*"; }

step "a. the canary report of the fixture state draws every chart"
"$phaseloop" canary report --state-dir "$state_dir" \
  --canary-id fixture-rollback --out "$work/report.html" >/dev/null ||
  fail "phaseloop canary report could not write the fixture's page"
"$check" "$work/report.html" --expect-charts 3 --screenshot "$work/report.png" \
  >"$work/ok.txt" 2>&1 || fail "the fixture's report did not pass: $(cat "$work/ok.txt")"
cat "$work/ok.txt"
grep -q ': 3 of 3 charts drew, nothing fetched (Chromium ' "$work/ok.txt" ||
  fail "no success line naming the charts and the browser"
[ "$(head -c 8 "$work/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  fail "the screenshot is not a PNG"

# Runs the check on a page made from the report by a perl edit; it must
# exit 1 and say `reason`.
expect_failure() {
  local name="$1" edit="$2" reason="$3"
  perl -0pe "$edit" "$work/report.html" >"$work/$name.html"
  cmp -s "$work/report.html" "$work/$name.html" && fail "$name: the edit changed nothing"
  "$check" "$work/$name.html" >"$work/$name.txt" 2>&1
  local status=$?
  [ $status -eq 1 ] || fail "$name: exit $status, expected 1: $(cat "$work/$name.txt")"
  grep -qF -- "$reason" "$work/$name.txt" ||
    fail "$name: no '$reason' in: $(cat "$work/$name.txt")"
  echo "$name: failed as it should ($reason)"
}

step "b. broken pages fail the check, each with its reason"
expect_failure no_marks 's#<circle class="pl-mark".*?</circle>##g' \
  '0 marks in the page, 12 expected'
expect_failure not_laid_out 's#<svg class="pl-chart"#<svg style="display:none" class="pl-chart"#' \
  'canary traffic per step): the chart has no area on the page'
expect_failure zero_size 's#(<svg class="pl-chart" data-marks="12") width="560" height="200"#$1 width="0" height="0"#' \
  'p95 per window, step 1): the chart has no area on the page'
expect_failure mark_outside 's# cy="[0-9.]+"# cy="5000"#' \
  'mark 1 of 12 lies outside the chart'
expect_failure flat_bar 's#(<rect class="pl-mark" [^>]*) height="[0-9.]+"#$1 height="0"#' \
  'mark 1 of 3 is not visible'
expect_failure no_script 's#<script>.*?</script>##s' \
  "the page's chart check did not run"
expect_failure from_network 's#<h2>Why</h2>#<img src="https://example.com/logo.png"><h2>Why</h2>#' \
  'points at the network: src="https://example.com/logo.png"'
expect_failure from_disk 's#<h2>Why</h2>#<img src="logo.png"><h2>Why</h2>#' \
  'loads a file from beside the page (not self-contained): src="logo.png"'
expect_failure from_stylesheet 's#<h2>Why</h2>#<link rel="stylesheet" href="style.css"><h2>Why</h2>#' \
  'loads a file from beside the page (not self-contained): <link rel="stylesheet"'
"$check" "$work/report.html" --expect-charts 4 >"$work/count.txt" 2>&1 &&
  fail "--expect-charts 4 passed a page of 3 charts"
grep -qF 'it has 3 charts, --expect-charts says 4' "$work/count.txt" ||
  fail "wrong count: $(cat "$work/count.txt")"
echo "wrong count: failed as it should"

step "c. bad input and no Chromium: exit 2, naming the fix"
"$check" "$work/absent.html" 2>"$work/absent.txt"
[ $? -eq 2 ] && grep -q 'absent.html: no such readable file' "$work/absent.txt" ||
  fail "a missing page: $(cat "$work/absent.txt")"
mkdir -p "$work/empty_path"
PATH="$work/empty_path" "$(command -v bash)" "$check" "$work/report.html" \
  2>"$work/nochromium.txt"
[ $? -eq 2 ] && grep -q 'no Chromium on PATH.*run tools/setup.sh' "$work/nochromium.txt" ||
  fail "no chromium: $(cat "$work/nochromium.txt")"
PHASELOOP_CHROMIUM="$work/absent" "$check" "$work/report.html" 2>"$work/badenv.txt"
[ $? -eq 2 ] && grep -q 'PHASELOOP_CHROMIUM=.* is not an executable' "$work/badenv.txt" ||
  fail "a bad PHASELOOP_CHROMIUM: $(cat "$work/badenv.txt")"
echo "PASS"
