#!/usr/bin/env bash
# Runs every fuzz target (common/fuzzing/fuzz.bzl) for longer than CI does,
# under clang-16's libFuzzer with ASan + UBSan (--config=fuzz), and prints
# per target the executions per second, the coverage (libFuzzer's `cov`
# edges and `ft` features) and the corpus it grew — the figures
# BENCHMARKS.md "Fuzzing" records.
#
#   tools/fuzz.sh [--seconds 60] [--only NAME] [--out DIR]
#
# New inputs go to DIR/<target>/corpus (the tree's seed corpus is never
# written); a crash leaves DIR/<target>/crash-* and makes the exit status 1:
# copy the input into the target's fuzz_corpus as a regression seed and fix
# the parser. --config=plain runs the same with the standalone driver
# (gcc, no coverage feedback) where clang's toolchain is not wanted.
set -euo pipefail
seconds=60 only="" out="" config=fuzz
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --config=plain) config=""; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
out="${out:-$(mktemp -d)}"
mkdir -p "$out"
flags=()
[ -n "$config" ] && flags=(--config="$config")
mapfile -t tests < <(tools/bazel.sh query 'attr(tags, "\bfuzz\b", tests(//...))' 2>/dev/null)
[ "${#tests[@]}" -gt 0 ] || { echo "no fuzz targets found" >&2; exit 2; }
targets=()
for t in "${tests[@]}"; do
  target="${t%_test}"
  [ -z "$only" ] || [ "${target##*:}" = "$only" ] || continue
  targets+=("$target")
done
tools/bazel.sh build "${flags[@]}" "${targets[@]}" >&2
bin_dir="$(tools/bazel.sh info "${flags[@]}" bazel-bin 2>/dev/null)"
status=0
printf '%-52s %10s %8s %8s %8s %s\n' target "execs/s" cov ft corpus result
for target in "${targets[@]}"; do
  pkg="${target%%:*}"; pkg="${pkg#//}"; name="${target##*:}"
  work="$out/$name"
  mkdir -p "$work/corpus"
  # Seeds: the corpus directory its CI run names (fuzz.bzl: args[1]).
  log="$work/log.txt"
  corpus_dir="$(tools/bazel.sh query --output=build "${target}_test" 2>/dev/null |
    grep -o "\"$pkg/fuzz_corpus/[^\"]*\"" | head -1 | tr -d '"')"
  if [ -n "$config" ]; then
    if "$bin_dir/$pkg/$name" -max_total_time="$seconds" -seed=1 -print_final_stats=1 \
        -artifact_prefix="$work/crash-" "$work/corpus" ${corpus_dir:+"$corpus_dir"} >"$log" 2>&1; then
      result=ok
    else
      result=CRASH; status=1
    fi
    execs="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo -)"
    cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo -)"
    ft="$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo -)"
  else
    start=$(date +%s.%N)
    runs=$((seconds * 1000))
    if "$bin_dir/$pkg/$name" --mutations "$runs" --seed 1 --crash-file "$work/crash-input" \
        ${corpus_dir:+"$corpus_dir"} >"$log" 2>&1; then
      result=ok
    else
      result=CRASH; status=1
    fi
    end=$(date +%s.%N)
    execs="$(python3 -c "print(round($runs / ($end - $start)))")"
    cov=- ft=-
  fi
  printf '%-52s %10s %8s %8s %8s %s\n' "$target" "$execs" "$cov" "$ft" \
    "$(ls "$work/corpus" | wc -l)" "$result"
done
exit "$status"
