#!/usr/bin/env bash
# layering_test.sh fails on each forbidden edge and passes a clean graph:
# fabricated :layering_deps lists, one per rule.
set -euo pipefail
check="tests/layering_test.sh"
dir="${TEST_TMPDIR:-$(mktemp -d)}/layering"
rm -rf "$dir"

# expect PASS|FAIL PACKAGE RULES...
expect() {
  local want="$1" pkg="$2"; shift 2
  mkdir -p "$dir/$pkg"
  printf '%s\n' "//$pkg:lib" "$@" > "$dir/$pkg/layering_deps"
  local got=PASS
  (cd "$dir" && bash "$OLDPWD/$check" "$pkg/layering_deps" >/dev/null) || got=FAIL
  if [ "$got" != "$want" ]; then
    echo "expected $want for //$pkg reaching: $*"
    exit 1
  fi
  rm -rf "${dir:?}/$pkg"
}

expect PASS compiler_driver/ir //proto:episode @llvm//:headers //common/process:child_process
expect FAIL compiler_driver/ir //offline_rl/learner:learner
expect FAIL compiler_driver/cc_wrapper @torch//:torch
expect FAIL compiler_driver/cc_wrapper @system_libs//:rdkafka
expect FAIL compiler_driver/cc_wrapper //common/kafka:producer
expect FAIL compiler_driver/session @system_libs//:grpc
expect FAIL compiler_driver/session //proto:compilation_session_grpc
expect FAIL compiler_driver/session //staging_harness/workers:worker_client
expect PASS common/process @system_libs//:absl //proto:episode
expect FAIL common/kafka //replay_buffer:replay_store
expect FAIL common/testing //compiler_driver/ir:module_loader
expect PASS replay_buffer //common/kafka:consumer
expect FAIL replay_buffer //offline_rl/learner:dataset
expect PASS canary/controller //offline_rl/policy_store:policy_store_client
expect FAIL canary/controller //offline_rl/policy_store:policy_store
expect PASS offline_rl/learner @torch//:torch //staging_harness/variants:corpus_variants
echo "layering rules: every forbidden edge fails, clean graphs pass"
