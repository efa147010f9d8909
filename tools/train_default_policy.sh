#!/usr/bin/env bash
# Trains the default size policy shipped in configs/policies/ from scratch,
# with the project's own commands, and evaluates it on the validation split.
#   tools/train_default_policy.sh [--work DIR] [--corpus DIR] [--out FILE]
# Steps (each skipped when its output exists, so a stopped run resumes):
#   1. the default Debian corpus (phaseloop corpus fetch-debian)
#   2. greedy text_size search on its train split, 6 s per module, seed 1
#   3. the buffer: corpus modules and the search's episodes
#   4. the candidate set: 24 best-known sequences and each after -Oz,
#      measured on every train module of at most 15,000 IR instructions
#      (lz4cli left out: a candidate pipeline hangs LLVM 16 on it; the miner
#      would kill it after --module-timeout, 10 minutes later)
#   5. training: behaviour cloning of each module's best candidate
#      (configs/learner/size_candidate_bc.yaml, seed 1, 2 threads), which
#      beat discrete CQL on the validation split (configs/policies/README.md)
#   6. phaseloop eval on the validation split, single and topk (1 s/module)
# Deterministic given the corpus: the search, the candidate measurements and
# the training are seeded; only the time-budgeted steps (2, 6) depend on the
# machine's speed.
set -euo pipefail
cd "$(dirname "$0")/.."

work="${XDG_CACHE_HOME:-$HOME/.cache}/phaseloop/default-policy"
corpus="${XDG_CACHE_HOME:-$HOME/.cache}/phaseloop/corpus-debian"
out="configs/policies/default.plpolicy"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --work) work="${2:?--work needs a directory}"; shift 2 ;;
    --corpus) corpus="${2:?--corpus needs a directory}"; shift 2 ;;
    --out) out="${2:?--out needs a file}"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "train_default_policy.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$work" "$(dirname "$out")"

tools/setup.sh
tools/bazel.sh build -c opt //cli:phaseloop //compiler_driver/service:session_worker \
  //offline_rl/learner:phaseloop-train
bin="$(tools/bazel.sh info -c opt bazel-bin 2>/dev/null)"
phaseloop="$bin/cli/phaseloop"
export PHASELOOP_TRAIN_BINARY="$bin/offline_rl/learner/phaseloop-train"

[ -f "$corpus/manifest.json" ] || "$phaseloop" corpus fetch-debian --out "$corpus"

episodes="$work/train_greedy_text.episodes"
if [ ! -f "$work/search.done" ]; then
  rm -f "$episodes"
  "$phaseloop" search --corpus "$corpus" --split train --strategy greedy \
    --objective text_size --budget 6 --workers 2 --seed 1 \
    --episodes-out "$episodes" --json > "$work/search.json"
  touch "$work/search.done"
fi

buffer="$work/train.db"
if [ ! -f "$work/candidates.json" ]; then
  rm -f "$buffer"
  "$phaseloop" buffer add --buffer "$buffer" --corpus "$corpus" --episodes "$episodes"
  "$phaseloop" candidates mine --buffer "$buffer" --corpus "$corpus" --split train \
    --max-candidates 24 --oz-prefix-variants --max-ir-count 15000 \
    --exclude lz4/programs/lz4cli --threads 2 \
    --out "$work/candidates.json.tmp"
  mv "$work/candidates.json.tmp" "$work/candidates.json"
fi

"$phaseloop" train --buffer "$buffer" --config configs/learner/size_candidate_bc.yaml \
  --candidates "$work/candidates.json" --seed 1 --threads 2 --out "$out"

for mode in single topk; do
  "$phaseloop" eval --policy "$out" --corpus "$corpus" --split validation \
    --mode "$mode" --budget-ms 1000 --threads 2 --json > "$work/eval-$mode.json"
done
echo "policy: $out; evaluation (JSON): $work/eval-single.json, $work/eval-topk.json"
