#!/usr/bin/env bash
# Runs tests under a sanitizer (issue 19; README "Sanitizer builds").
#
#   tools/sanitize.sh asan        the fast subset under ASan + UBSan (what
#                                 tools/test.sh, and so CI, runs): the unit
#                                 tests below that do not drive the whole
#                                 phaseloop binary
#   tools/sanitize.sh asan --all  every test under ASan + UBSan
#   tools/sanitize.sh tsan        the threaded parts' tests (tag "tsan")
#                                 under ThreadSanitizer
# Extra arguments after the mode go to `bazel test`. The configs live in
# .bazelrc (--config=asan / --config=tsan); their outputs sit beside the
# plain build's (--platform_suffix), so switching costs no rebuild.
set -euo pipefail
case "${1:-}" in  # the header above
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
cd "$(dirname "$0")/.."
mode="${1:-}"
shift || true
# The fast subset: the parsers of outside input (with their fuzz runs) and
# the helpers every stage uses, the reward engine, the judge and its
# statistics, and the buffer — unit tests that need no nested Bazel, clang
# run or network beyond loopback. Tests that run //tools:phaseloop are left
# to --all: an instrumented build of the whole binary would double CI's
# build.
fast=(
  //common/...
  //reward_engine/...
  //replay_buffer/...
  //canary/judge/...
  //canary/budget_policy/...
  //canary/controller:rollout_config_test
  //canary/controller:step_evidence_test
  //canary/controller:canary_controller_test
  //canary/controller:canary_state_store_test
  //canary/load/...
  //compiler_driver/cc_wrapper:argument_processing_test
  //compiler_driver/cc_wrapper:response_file_test
  //compiler_driver/cc_wrapper:policy_test
  //compiler_driver/cc_wrapper:spool_test
  //compiler_driver/policy_runtime:policy_artifact_test
  //staging_harness/workloads/...
  //staging_harness/stats/...
)
# The Kafka-backed suites take 20-60 s each under ASan (over half the
# subset's time): they run under TSan (tools/sanitize.sh tsan) and --all,
# not in CI's pass.
kafka_suites=(
  //reward_engine/engine:reward_engine_test
  //reward_engine/engine:reward_engine_scaleout_test
  //replay_buffer:kafka_ingest_test
  //common/kafka:consumer_test
  //common/kafka:producer_test
)
case "$mode" in
  asan)
    if [ "${1:-}" = --all ]; then
      shift
      exec tools/bazel.sh test --config=asan --nocache_test_results //... "$@"
    fi
    mapfile -t tests < <(tools/bazel.sh query --noshow_progress \
      "(tests(set(${fast[*]})) + attr(tags, '\bfuzz\b', tests(//...))) except rdeps(//..., //tools:phaseloop) except set(${kafka_suites[*]})")
    [ "${#tests[@]}" -gt 0 ] || { echo "sanitize.sh: no tests in the fast subset" >&2; exit 2; }
    exec tools/bazel.sh test --config=asan --nocache_test_results "$@" -- "${tests[@]}" ;;
  tsan)
    # Debian's uninstrumented libraries' internal races (see the file).
    tsan_options="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/common/sanitizers/tsan_suppressions.txt"
    exec tools/bazel.sh test --config=tsan --nocache_test_results --build_tests_only \
      --test_env=TSAN_OPTIONS="$tsan_options" \
      --test_tag_filters=tsan "$@" //... ;;
  *)
    echo "usage: tools/sanitize.sh asan [--all] | tsan  [bazel test flags]" >&2
    exit 2 ;;
esac
