#!/usr/bin/env bash
# End-to-end: `phaseloop stage` on the example workload (a real Makefile C
# project, configs/workloads/example) through the real phaseloop-cc, as a
# user runs it. Timing budgets are tiny: this checks verdicts, exit codes,
# outputs and records, never speed.
#   1. a candidate that builds a different program: checked, then timed;
#      exit 0; the table and --json agree; the staging reward is in the
#      replay buffer, joined to the candidate build's decisions;
#   2. the baseline as the candidate: byte-identical, nothing timed;
#   3. an injected miscompile (the test-only wrapper's
#      phaseloop-test-miscompile pass): exit 3, no speed figure, recorded and
#      its (module, pipeline) pair blocked in the buffer;
#   4. bad input: an unknown workload (exit 2, the available ones listed),
#      a workload file with a bad field (exit 2, file and field named);
#   5. the product's wrapper refuses the test-only pass: staged with it, the
#      policy reaches no unit, which is bad input (exit 2, the refusal
#      named, nothing recorded); a policy file that does not exist is bad
#      input before any build;
#   6. `phaseloop profile` (JSON) and `stage --profile`: the profile-guided
#      candidate is measured with its unit still optimised in process; a
#      missing profile is bad input naming the command that writes one.
#   7. --candidate-cflags (the candidate's build flags, named in the table)
#      and --link-flags (every link on both sides); a level or an output
#      flag in either is bad input naming the option.
#   8. --bolt: the candidate rewritten by BOLT from a profile of its runs on
#      inputs of another seed, checked, then timed; every build linked with
#      the relocations BOLT needs; --bolt with --buffer and
#      --bolt-input-seed without --bolt are bad input.
#
# Usage: stage_test.sh --phaseloop CLI --cc PHASELOOP_CC --test-cc TEST_CC
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

phaseloop="" cc="" test_cc=""
while [ $# -gt 0 ]; do
  case "$1" in
    --phaseloop) phaseloop="$(realpath "$2")"; shift 2 ;;
    --cc) cc="$(realpath "$2")"; shift 2 ;;
    --test-cc) test_cc="$(realpath "$2")"; shift 2 ;;
    *) fail "unknown argument $1" ;;
  esac
done
work="${TEST_TMPDIR:-$(mktemp -d)}/stage"
mkdir -p "$work"
buffer="$work/buffer.db"
quick=(--min-pairs 3 --max-pairs 4 --workloads-dir configs/workloads)

step "1. a different program: checked, then timed"
set +e
"$phaseloop" stage --workload example --policy 'fixed:default<O1>' \
  --cc "$cc" --buffer "$buffer" --work-dir "$work/w1" --json "${quick[@]}" \
  >"$work/1.json" 2>"$work/1.err"
rc=$?
set -e
[ $rc -eq 0 ] || { cat "$work/1.err"; fail "step 1 exited $rc"; }
jq -e '.workloads[0].verdict == "measured" and .workloads[0].pairs >= 3
       and .workloads[0].speedup.low <= .workloads[0].speedup.median
       and .workloads[0].optimized_units == 1' "$work/1.json" >/dev/null \
  || { cat "$work/1.json"; fail "step 1: JSON"; }
# The machine's activity beside the figure (unavailable only where /proc
# cannot be read).
jq -e '.workloads[0].machine | (.warnings | type == "array")
       and (.available == false or (.cpus | length) >= 1)' "$work/1.json" \
  >/dev/null || { cat "$work/1.json"; fail "step 1: no machine activity"; }
# The example's runs take ~0.02 s of CPU each: said, in the JSON and the
# progress, however busy the machine (the rule reads CPU time).
jq -e '.workloads[0].short_runs | test("runs are short")' "$work/1.json" \
  >/dev/null || { cat "$work/1.json"; fail "step 1: short runs not said"; }
grep -q "short runs: " "$work/1.err" || fail "step 1: no short-runs progress"
grep -q "check: baseline twice" "$work/1.err" || fail "step 1: no check progress"
grep -q "timing:" "$work/1.err" || fail "step 1: no timing progress"
build_id=$(jq -r '.workloads[0].candidate.build_id' "$work/1.json")
"$phaseloop" buffer stats --buffer "$buffer" --json >"$work/stats.json"
jq -e '[.rewards[] | select(.source == "staging")][0].rewards == 1' \
  "$work/stats.json" >/dev/null || { cat "$work/stats.json"; fail "step 1: no staging reward"; }
sqlite3 "$buffer" "SELECT count(*) FROM decisions WHERE build_id = '$build_id'" \
  >"$work/decisions" && [ "$(cat "$work/decisions")" = 2 ] \
  || fail "step 1: the candidate build's 2 decisions are not in the buffer ($(cat "$work/decisions"))"
sqlite3 "$buffer" "SELECT count(*) FROM final_rewards WHERE build_id = '$build_id' AND source = 'staging'" \
  | grep -qx 1 || fail "step 1: the reward does not carry the build id"

step "2. the baseline as the candidate: identical, not timed"
"$phaseloop" stage --workload example --policy baseline --cc "$cc" \
  --work-dir "$work/w2" "${quick[@]}" >"$work/2.txt" 2>"$work/2.err" \
  || { cat "$work/2.err"; fail "step 2 failed"; }
grep -Eq "^example +train +identical +1" "$work/2.txt" || { cat "$work/2.txt"; fail "step 2: table"; }
! grep -q "timing:" "$work/2.err" || fail "step 2: timed an identical build"

step "3. an injected miscompile: exit 3, recorded and blocked"
set +e
"$phaseloop" stage --workload example \
  --policy 'fixed:default<O3>,phaseloop-test-miscompile' --cc "$test_cc" \
  --buffer "$buffer" --work-dir "$work/w3" "${quick[@]}" \
  >"$work/3.txt" 2>"$work/3.err"
rc=$?
set -e
[ $rc -eq 3 ] || { cat "$work/3.err" "$work/3.txt"; fail "step 3 exited $rc, not 3"; }
grep -Eq "^example +train +miscompile" "$work/3.txt" || { cat "$work/3.txt"; fail "step 3: table"; }
grep -q "default<O3>,phaseloop-test-miscompile" "$work/3.txt" || fail "step 3: blamed pair not shown"
! grep -q "timing:" "$work/3.err" || fail "step 3: timed a miscompile"
"$phaseloop" buffer miscompiles --buffer "$buffer" --json >"$work/misc.json"
jq -e '.miscompiles | length == 1' "$work/misc.json" >/dev/null \
  || { cat "$work/misc.json"; fail "step 3: miscompile not recorded"; }
sqlite3 "$buffer" "SELECT pipeline FROM blocked_pipelines" \
  | grep -qx 'default<O3>,phaseloop-test-miscompile' || fail "step 3: pair not blocked"

step "4. bad input"
set +e
"$phaseloop" stage --workload no-such --policy baseline --cc "$cc" \
  "${quick[@]}" >/dev/null 2>"$work/4.err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "step 4: unknown workload exited $rc"
grep -q "no-such" "$work/4.err" && grep -q "example" "$work/4.err" \
  || { cat "$work/4.err"; fail "step 4: message"; }
sed 's/timeout_s: 5$/timeout_s: soon/' configs/workloads/example.yaml >"$work/bad.yaml"
sed -i "s|^source: example|source: $PWD/configs/workloads/example|" "$work/bad.yaml"
set +e
"$phaseloop" stage --workload "$work/bad.yaml" --policy baseline --cc "$cc" \
  "${quick[@]}" >/dev/null 2>"$work/4b.err"
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$work/4b.err"; fail "step 4: bad field exited $rc"; }
grep -q "bad.yaml: run\[0\].timeout_s" "$work/4b.err" || { cat "$work/4b.err"; fail "step 4: field not named"; }

step "5. the product's wrapper refuses the test-only pass: bad input, nothing recorded"
set +e
"$phaseloop" stage --workload example \
  --policy 'fixed:default<O3>,phaseloop-test-miscompile' --cc "$cc" \
  --buffer "$work/5.db" --work-dir "$work/w5" --json "${quick[@]}" >"$work/5.txt" 2>"$work/5.err"
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$work/5.err"; fail "step 5: a refused policy exited $rc"; }
# --json prints JSON even when a workload could not be staged.
jq -e '(.workloads | length) == 0 and (.error | test("could not use it"))' "$work/5.txt" >/dev/null \
  || { cat "$work/5.txt"; fail "step 5: no JSON with the error"; }
grep -q -- "--policy fixed:default<O3>,phaseloop-test-miscompile: phaseloop-cc could not use it.*policy_refused" "$work/5.err" \
  || { cat "$work/5.err"; fail "step 5: the refusal is not named"; }
[ "$(sqlite3 "$work/5.db" "SELECT count(*) FROM final_rewards")" = 0 ] \
  || fail "step 5: a reward was recorded for a policy the wrapper refused"
# A policy file that does not exist is bad input before any build.
set +e
"$phaseloop" stage --workload example --policy "$work/no-such.plpolicy" --cc "$cc" \
  --work-dir "$work/w5b" "${quick[@]}" >/dev/null 2>"$work/5b.err"
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$work/5b.err"; fail "step 5: a missing policy file exited $rc"; }
grep -q -- "--policy $work/no-such.plpolicy" "$work/5b.err" || { cat "$work/5b.err"; fail "step 5: missing policy not named"; }
[ ! -e "$work/w5b" ] || fail "step 5: built before reading the policy"
# A policy named by a relative path is read where stage was started, not in
# the build's own directory (the wrapper runs there).
root="$PWD"
echo 'fixed:default<O1>' > "$work/rel.policy"
(cd "$work" && "$phaseloop" stage --workload example --policy rel.policy \
  --cc "$cc" --workloads-dir "$root/configs/workloads" --min-pairs 3 \
  --max-pairs 4 --work-dir "$work/w5d" >"$work/5d.txt" 2>"$work/5d.err") \
  || { cat "$work/5d.err"; fail "step 5: a relative policy path failed"; }
grep -Eq "^example +train +measured" "$work/5d.txt" \
  || { cat "$work/5d.txt"; fail "step 5: the relative policy was not staged"; }
# One stage at a time in a work directory (two replaced each other's builds):
# with its lock held, another is refused at once, naming the directory.
mkdir -p "$work/w5c"
flock "$work/w5c/example.lock" sleep 60 &
holder=$!
for _ in $(seq 600); do
  ! flock -n "$work/w5c/example.lock" true || { sleep 0.1; continue; }
  break
done
! flock -n "$work/w5c/example.lock" true || fail "step 5: the lock holder never took the lock"
set +e
"$phaseloop" stage --workload example --policy 'fixed:default<O1>' --cc "$cc" \
  --work-dir "$work/w5c" "${quick[@]}" >/dev/null 2>"$work/5c.err"
rc=$?
set -e
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
[ $rc -eq 2 ] || { cat "$work/5c.err"; fail "step 5: a busy work directory exited $rc"; }
grep -q "another phaseloop run (a stage, a runtime search or a training.s speed gate) is using $work/w5c/example" "$work/5c.err" \
  || { cat "$work/5c.err"; fail "step 5: the busy work directory is not named"; }

step "6. a profile, then a profile-guided candidate; a missing profile is bad input"
"$phaseloop" profile --workload example --workloads-dir configs/workloads --cc "$cc" \
  --input-seed 3 --out "$work/example.profdata" --work-dir "$work/w6p" --json \
  >"$work/6p.json" 2>"$work/6p.err" || { cat "$work/6p.err"; fail "step 6: profile failed"; }
jq -e '.raw_profiles == 2 and .generated_inputs == 1 and .input_seed == 3
       and (.summary | test("Maximum function count"))' "$work/6p.json" >/dev/null \
  || { cat "$work/6p.json"; fail "step 6: profile JSON"; }
"$phaseloop" stage --workload example --policy baseline --cc "$cc" \
  --profile "$work/example.profdata" --work-dir "$work/w6" --json "${quick[@]}" \
  >"$work/6.json" 2>"$work/6.err" || { cat "$work/6.err"; fail "step 6: stage failed"; }
jq -e '.workloads[0].verdict == "measured" and .workloads[0].optimized_units == 1' \
  "$work/6.json" >/dev/null || { cat "$work/6.json"; fail "step 6: stage JSON"; }
set +e
"$phaseloop" stage --workload example --policy baseline --cc "$cc" \
  --profile "$work/none.profdata" "${quick[@]}" >/dev/null 2>"$work/6b.err"
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "phaseloop profile" "$work/6b.err" || { cat "$work/6b.err"; fail "step 6: missing profile exited $rc"; }

step "7. a build flag as the candidate, link flags for both sides; a level or an output flag is bad input"
"$phaseloop" stage --workload example --policy baseline --cc "$cc" \
  --candidate-cflags=-fno-inline-functions --link-flags="-Wl,-Map,link.map" \
  --work-dir "$work/w7" "${quick[@]}" \
  >"$work/7.txt" 2>"$work/7.err" || { cat "$work/7.err"; fail "step 7: stage failed"; }
grep -q "example: the candidate was built with extra flags -fno-inline-functions" \
  "$work/7.txt" || { cat "$work/7.txt"; fail "step 7: the flags are not named"; }
grep -q "example: every build linked with the flags -Wl,-Map,link.map" \
  "$work/7.txt" || { cat "$work/7.txt"; fail "step 7: the link flags are not named"; }
for side in baseline candidate; do
  [ -f "$work/w7/example/build-$side/src/link.map" ] \
    || fail "step 7: the $side's link did not get --link-flags"
done
grep -Eq "^example +train +(measured|identical)" "$work/7.txt" \
  || { cat "$work/7.txt"; fail "step 7: table"; }
for option in --candidate-cflags --link-flags; do
  for bad in -O2 "-o x"; do
    set +e
    "$phaseloop" stage --workload example --policy baseline --cc "$cc" \
      "$option=$bad" "${quick[@]}" >/dev/null 2>"$work/7b.err"
    rc=$?
    set -e
    [ $rc -eq 2 ] && grep -q -- "$option '$bad'" "$work/7b.err" \
      || { cat "$work/7b.err"; fail "step 7: $option '$bad' exited $rc"; }
  done
done
# With link flags the builds' CC is a script in the work directory, which
# make splits at blanks: such a directory is refused before any build.
set +e
"$phaseloop" stage --workload example --policy baseline --cc "$cc" \
  --link-flags="-Wl,-Map,link.map" --work-dir "$work/w 7" "${quick[@]}" \
  >/dev/null 2>"$work/7c.err"
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "holds a blank" "$work/7c.err" \
  || { cat "$work/7c.err"; fail "step 7: a work directory with a blank exited $rc"; }

step "8. the candidate rewritten by BOLT; what does not go with --bolt is bad input"
"$phaseloop" stage --workload example --policy baseline --cc "$cc" --bolt \
  --bolt-input-seed 7 --work-dir "$work/w8" --json "${quick[@]}" \
  >"$work/8.json" 2>"$work/8.err" || { cat "$work/8.err"; fail "step 8: stage failed"; }
jq -e '.workloads[0] | .verdict == "measured"
  and (.candidate.bolt.artifacts[0] | .path == "wordfreq" and .optimized and .profiles == 2)
  and .candidate.bolt.input_seed == 7
  and .candidate.artifacts_hash != .baseline.artifacts_hash
  and (.baseline.link_flags | index("-Wl,--emit-relocs") != null)' \
  "$work/8.json" >/dev/null || { cat "$work/8.json"; fail "step 8: JSON"; }
grep -q "bolt: wordfreq: 2 profile(s)" "$work/8.err" || { cat "$work/8.err"; fail "step 8: no BOLT progress"; }
grep -q "check: the candidate against the baseline" "$work/8.err" || fail "step 8: the BOLT candidate was not checked"
for bad in "--buffer $work/8.db" "--bolt-input-seed 3"; do
  extra=--bolt
  [ "$bad" = "--bolt-input-seed 3" ] && extra=""
  set +e
  # shellcheck disable=SC2086
  "$phaseloop" stage --workload example --policy baseline --cc "$cc" $extra $bad \
    "${quick[@]}" >/dev/null 2>"$work/8b.err"
  rc=$?
  set -e
  [ $rc -eq 2 ] && grep -q -- "--bolt" "$work/8b.err" \
    || { cat "$work/8b.err"; fail "step 8: '$extra $bad' exited $rc"; }
done

step "9. a runtime search with a relative --work-dir (its input generator wrote nowhere)"
mkdir -p "$work/rel"
(cd "$work/rel" && "$phaseloop" search --objective runtime --workload example \
  --workloads-dir "$OLDPWD/configs/workloads" --cc "$cc" --work-dir scratch \
  --budget 20 --max-evaluations 1 >/dev/null 2>"$work/9.err") \
  || { cat "$work/9.err"; fail "step 9: the runtime search failed"; }
[ -f "$work/rel/scratch/example/inputs/generated.txt" ] \
  || { cat "$work/9.err"; fail "step 9: no inputs under the relative work directory"; }
echo "PASS"
