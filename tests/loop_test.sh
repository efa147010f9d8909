#!/usr/bin/env bash
# End-to-end: `phaseloop loop` runs one shortened iteration of the closed
# loop as a user runs it (README "The closed loop"), on embedded Kafka and a
# policy store it serves itself: a runtime search of the zlib workload, the
# speed learner and its gate (bc), publish, staging against stable, a canary
# rollout of the demo service built with Bazel through phaseloop-cc.
#
#   a. The loop is SIGKILLed while its canary steps. The same command
#      resumes it: only the canary stage runs again (attempts 2; every
#      other stage 1), the canary resumes under its id, and the buffer holds
#      each iteration's rows once: one canary final reward, the search's
#      episodes once, one staging result.
#   b. `phaseloop report` writes HTML and JSON; the HTML is looked at in
#      headless Chromium (tools/check_report.sh): every chart drew.
#   c. A second start of the finished loop runs nothing; a loop config with
#      a typo is bad input (exit 2) naming the file and the field, and so is
#      a mistyped --policy-store, refused before any stage runs.
#
# Usage: loop_test.sh --phaseloop BIN --check-report SCRIPT
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  if [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ] && [ -d "${state:-}" ]; then
    cp -r "$state/loops" "$state/canaries" "$TEST_UNDECLARED_OUTPUTS_DIR/" 2>/dev/null || true
  fi
  exit 1
}
step() { echo "== $*"; }

phaseloop="" check_report=""
while [ $# -gt 0 ]; do
  case "$1" in
    --phaseloop) phaseloop="$(readlink -f "$2")"; shift 2 ;;
    --check-report) check_report="$(readlink -f "$2")"; shift 2 ;;
    *) fail "unknown argument '$1'" ;;
  esac
done
[ -x "$phaseloop" ] && [ -f "$check_report" ] || fail "--phaseloop and --check-report are required"
repo="$(dirname "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")")"
# Bazel gives tests a HOME of their own: the Debian source cache is the
# real user's (tools/fetch_sources.sh fills it).
export PHASELOOP_CACHE="${PHASELOOP_CACHE:-$(getent passwd "$(id -u)" | cut -d: -f6)/.cache/phaseloop}"

work="${TEST_TMPDIR:-$(mktemp -d)}/loop"
rm -rf "$work"
mkdir -p "$work"
state="$work/state"
unset PHASELOOP_KAFKA PHASELOOP_POLICY_STORE PHASELOOP_STATE_DIR

# The gate checks bc's outputs and times nothing: this test's subject is
# the loop's machinery, and a 5 s timing under the suite's load refused a
# policy (bc read 0.94) often enough to stop the loop before its canary.
# The demo service with short steps, and a budget policy that lets a new
# service's first canary run without staging evidence (the shipped one
# asks for a staging lower bound of 0.98-1.00, which a few
# seconds of timing cannot show).
sed -e 's/min_candidate_lower_bound: [0-9.]*/min_candidate_lower_bound: null/' \
    "$repo/configs/error_budget_policy.yaml" >"$work/budget.yaml"
sed -e "s#^slo_dir: .*#slo_dir: $repo/configs/slo#" \
    -e "s#  workspace: .*#  workspace: $repo/canary/service/demo_workspace#" \
    -e "s#  judge: .*#  judge: $repo/configs/canary/rollout_judge.yaml#" \
    -e "s#^budget_policy: .*#budget_policy: $work/budget.yaml#" \
    -e "s#duration_s: 30#duration_s: 22#" -e "s#warmup_s: 4#warmup_s: 2#" \
    "$repo/configs/services/demo.yaml" >"$work/demo.yaml"
cat >"$work/loop.yaml" <<YAML
service: $work/demo.yaml
learner: $repo/configs/learner/speed_candidate_cql.yaml
workloads_dir: $repo/configs/workloads
iterations: 1
explore: {workload: zlib, budget_s: 20, confirm_budget_s: 5, runoff_budget_s: 5, runoff_contenders: 1}
gate: {split: test, workloads: [bc], budget_s: 5, timed: false}
stage: {workload: zlib, budget_s: 8}
YAML

loop() {  # runs the loop in the foreground; prints its exit code
  set +e
  "$phaseloop" loop --config "$work/loop.yaml" --state-dir "$state" "$@" \
    >"$work/loop.out" 2>"$work/loop.err"
  local rc=$?
  set -e
  echo "$rc"
}
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
loop_state="$state/loops/loop/state.json"
stage_status() {  # STAGE: its status in iteration 1 ("" before it exists)
  python3 - "$loop_state" "$1" <<'PY' 2>/dev/null || true
import json, sys
r = json.load(open(sys.argv[1]))
its = r.get("iterations", [])
print(next((s["status"] for s in (its[0]["stages"] if its else []) if s["name"] == sys.argv[2]), ""))
PY
}

step "a. SIGKILL while the canary steps; the same command resumes"
"$phaseloop" loop --config "$work/loop.yaml" --state-dir "$state" \
  >"$work/killed.out" 2>"$work/killed.err" &
pid=$!
canary_state="$state/canaries/loop-1/state.json"
stepping=""
for _ in $(seq 1800); do  # up to 15 minutes to reach the canary's first step
  kill -0 "$pid" 2>/dev/null || fail "the loop ended before its canary stepped: $(tail -5 "$work/killed.err")"
  if [ "$(stage_status canary)" = running ] && [ -f "$canary_state" ] &&
     [ "$(field "$canary_state" "r['phase']")" = stepping ]; then
    stepping=1
    break
  fi
  sleep 0.5
done
[ -n "$stepping" ] || fail "the canary never stepped: $(tail -5 "$work/killed.err")"
sleep 3
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
[ "$(field "$loop_state" "r['phase']")" = running ] || fail "a killed loop is not resumable"
grep -q "sets gate.timed: false" "$work/killed.err" ||
  fail "the loop did not warn that its gate is untimed"

rc="$(loop)"
[ "$rc" = 0 ] || fail "the resumed loop exited $rc: $(tail -5 "$work/loop.err")"
"$phaseloop" loop --config "$work/loop.yaml" --state-dir "$state" --json \
  >"$work/loop.json" 2>/dev/null || fail "the finished loop's second start failed"
[ "$(field "$work/loop.json" "r['phase']")" = done ] || fail "the loop is not done"
# A resumed loop keeps its buffer and its plan: another --buffer, or fewer
# --iterations than it planned, is refused before anything runs.
rc="$(loop --buffer "$work/other.db")"
[ "$rc" = 2 ] && grep -q "keeps its replay buffer at .*/buffer.db (its earlier" "$work/loop.err" ||
  fail "another --buffer was not refused ($rc): $(tail -2 "$work/loop.err")"
[ ! -e "$work/other.db" ] || fail "the refused --buffer was created"
planned() {  # N: sets the loop's planned iterations in its state
  python3 - "$loop_state" "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["iterationsPlanned" if "iterationsPlanned" in r else "iterations_planned"] = int(sys.argv[2])
json.dump(r, open(sys.argv[1], "w"))
PY
}
planned 3
rc="$(loop --iterations 2)"
planned 1
[ "$rc" = 2 ] && grep -q -- "--iterations 2: loop loop planned 3 iterations already" "$work/loop.err" ||
  fail "fewer --iterations than planned were not refused ($rc): $(tail -2 "$work/loop.err")"
attempts="$(field "$work/loop.json" "{s['name']: s['attempts'] for s in r['iterations'][0]['stages']}")"
[ "$attempts" = "{'explore': 1, 'train': 1, 'publish': 1, 'stage': 1, 'canary': 2}" ] ||
  fail "stages ran more than once besides the interrupted canary: $attempts"
[ "$(field "$work/loop.json" "r['starts']")" = 3 ] || fail "starts: $(field "$work/loop.json" "r['starts']")"
phase="$(field "$work/loop.json" "r['iterations'][0]['canary_phase']")"
case "$phase" in promoted | rolled_back) ;; *) fail "the canary ended $phase" ;; esac
[ "$(field "$canary_state" "r['resumes']")" -ge 1 ] || fail "the canary did not resume"
"$phaseloop" buffer stats --buffer "$state/buffer.db" --json >"$work/stats.json"
# The rollout's final reward (the reward engine's per-window canary rewards
# are rows of their own).
runs="$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT COUNT(*) FROM final_rewards WHERE reward_id LIKE 'canary-run/%'\").fetchone()[0])" "$state/buffer.db")"
[ "$runs" = 1 ] || fail "the buffer holds $runs canary run rewards, not 1"
# The search's episodes, merged once however often the stage was entered:
# as many in the buffer as in the iteration's own file.
"$phaseloop" buffer stats --buffer "$state/loops/loop/iteration-1/explore.db" --json >"$work/explore-stats.json"
searched() { field "$1" "sum(g['episodes'] for g in r['episodes'] if g['behaviour_policy'].startswith('runtime_search'))"; }
[ "$(searched "$work/explore-stats.json")" -gt 0 ] || fail "the search recorded no episode"
[ "$(searched "$work/stats.json")" = "$(searched "$work/explore-stats.json")" ] ||
  fail "the buffer holds $(searched "$work/stats.json") search episodes, the search made $(searched "$work/explore-stats.json")"
"$phaseloop" buffer stats --buffer "$state/loops/loop/iteration-1/stage.db" --json >"$work/stage-stats.json"
staged() { field "$1" "sum(g['rewards'] for g in r['rewards'] if g['source'] == 'staging')"; }
# Staging rewards come from the search's evaluations and from the stage.
made=$(( $(staged "$work/explore-stats.json") + $(staged "$work/stage-stats.json") ))
[ "$(staged "$work/stage-stats.json")" -ge 1 ] || fail "staging recorded no reward"
[ "$(staged "$work/stats.json")" = "$made" ] ||
  fail "the buffer holds $(staged "$work/stats.json") staging rewards, the search and the stage made $made"

step "b. the report, looked at in headless Chromium"
"$phaseloop" report --state-dir "$state" --loop-id loop --out "$work/report.html" \
  --json-out "$work/report.json" >"$work/report.out" 2>&1 ||
  fail "phaseloop report failed: $(cat "$work/report.out")"
[ "$(field "$work/report.json" "len(r['iterations'])")" = 1 ] || fail "the report's JSON has no iteration"
bash "$check_report" "$work/report.html" >"$work/check.out" 2>&1 ||
  fail "the report did not draw: $(cat "$work/check.out")"
# Written over the loop's state (or one output over the other), a report
# destroyed it, exit 0: refused, the state intact.
for outputs in "--json-out $state/loops/loop/state.json" \
               "--out $work/r.html --json-out $work/r.html"; do
  set +e
  # shellcheck disable=SC2086
  "$phaseloop" report --state-dir "$state" --loop-id loop $outputs \
    >/dev/null 2>"$work/over.err"
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "report $outputs exited $rc, not 2: $(cat "$work/over.err")"
done
"$phaseloop" report --state-dir "$state" --loop-id loop --json >/dev/null ||
  fail "the loop's state did not survive a refused report"

step "c. bad input"
sed 's/^iterations: 1/iterashuns: 1/' "$work/loop.yaml" >"$work/typo.yaml"
set +e
"$phaseloop" loop --config "$work/typo.yaml" --state-dir "$state" >/dev/null 2>"$work/typo.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a typo in the loop config exited $rc, not 2"
grep -q "typo.yaml: iterashuns: unknown field" "$work/typo.err" || fail "the error does not name the field: $(cat "$work/typo.err")"
# A mistyped policy store is refused before any stage runs, and is not
# saved as the loop's store (it was, after explore had spent its budget).
set +e
"$phaseloop" loop --config "$work/loop.yaml" --state-dir "$state" --loop-id typo-store \
  --policy-store x >/dev/null 2>"$work/store.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a mistyped --policy-store exited $rc, not 2: $(cat "$work/store.err")"
grep -q "policy store x: .*is not HOST:PORT" "$work/store.err" || fail "the error does not name the store: $(cat "$work/store.err")"
[ ! -e "$state/loops/typo-store/state.json" ] || fail "the loop saved a state with the mistyped store"
# A buffer whose path is not UTF-8 (the state's JSON would keep it altered,
# and the resumed loop would open another buffer) is refused before any
# helper starts, also when reached through a link with a UTF-8 name.
mkdir -p "$work/caf"$'\xe9'
ln -s "$work/caf"$'\xe9' "$work/latin-link"
for buffer in "$work/caf"$'\xe9'"/b.db" "$work/latin-link/b.db"; do
  set +e
  "$phaseloop" loop --config "$work/loop.yaml" --state-dir "$state" --loop-id latin \
    --buffer "$buffer" >/dev/null 2>"$work/latin.err"
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "a non-UTF-8 --buffer exited $rc, not 2: $(cat "$work/latin.err")"
  grep -q 'caf\\xe9.*not UTF-8 text' "$work/latin.err" || fail "the error does not name the path: $(cat "$work/latin.err")"
  ! grep -q "embedded Kafka\|policy store" "$work/latin.err" || fail "helpers started before the refusal: $(cat "$work/latin.err")"
  [ ! -e "$state/loops/latin/state.json" ] || fail "the loop saved a state with the non-UTF-8 buffer"
done
echo PASS
