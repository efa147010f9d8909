#!/usr/bin/env bash
# One fuzz target's bounded CI run (common/fuzzing/fuzz.bzl):
#   run_fuzz_target.sh BINARY CORPUS_DIR RUNS MAX_LEN ENGINE [SEED_FILE...]
# ENGINE is libfuzzer (a --config=fuzz build: -seed=1 -runs=RUNS over a copy
# of the corpus, so the tree's corpus is never written) or standalone (the
# driver's deterministic mutations). Exit status: the fuzzer's.
set -euo pipefail
binary="$1" corpus="$2" runs="$3" max_len="$4" engine="$5"
shift 5
seeds=("$@")  # more seed files, read in place
out="${TEST_UNDECLARED_OUTPUTS_DIR:-$(mktemp -d)}"
mkdir -p "$out"
case "$engine" in
  libfuzzer)
    work="$(mktemp -d)"
    cp -r "$corpus/." "$work/"
    for seed in "${seeds[@]}"; do cp "$seed" "$work/"; done
    exec "$binary" -seed=1 -runs="$runs" -max_len="$max_len" \
      -artifact_prefix="$out/" -print_final_stats=1 "$work" ;;
  standalone)
    exec "$binary" --mutations "$runs" --seed 1 --max-len "$max_len" \
      --crash-file "$out/crash-input" "$corpus" "${seeds[@]}" ;;
  *)
    echo "run_fuzz_target.sh: unknown engine '$engine'" >&2
    exit 2 ;;
esac
