#!/usr/bin/env bash
# Trains the default size policy shipped in configs/policies/ from scratch,
# with the project's own commands, and evaluates it on the validation split.
#   tools/train_default_policy.sh [--work DIR] [--corpus DIR] [--out FILE] [--check]
# Steps (each skipped when its output exists, so a stopped run resumes):
#   1. the default Debian corpus (phaseloop corpus fetch-debian)
#   2. greedy alloc_size search (the whole object's allocated bytes) on its
#      train split modules of at most 15,000 IR instructions, seed 1, 366
#      evaluations (three greedy levels of the 122 actions) per module: a
#      budget that ends each search at the same point on any machine
#      (--budget and --step-timeout 600 only guard against a runaway module
#      or step; the run says if the clock stopped any search or failed a
#      step)
#   3. the buffer: corpus modules and the search's episodes
#   4. the candidate set: -Oz, the fixed pipelines that beat it on some
#      modules (function merging, inline thresholds 0 and -200), and the 24
#      best-known sequences, each also after -Oz; each of those with and
#      without LLVM's machine outliner (104 candidates), measured on every
#      train module of at most 15,000 IR instructions (lz4cli left out: a
#      candidate pipeline hangs LLVM 16 on it; the miner would kill it after
#      --module-timeout, 10 min later)
#   5. training: behaviour cloning of each module's best candidate
#      (configs/learner/size_candidate_bc.yaml, objective alloc_size, seed 1,
#      2 threads), with the single-mode abstain margin from 5-fold
#      cross-fitting, single never taking a candidate measured more than
#      1 % larger than -Oz on a training module
#   6. phaseloop eval on the validation split, single and topk (topk's work
#      budget 10,000)
# This is the second generation (issue 20): it chooses by the whole object.
# The first generation chose by .text alone (objective text_size in search,
# mining and training; git history before the second one shipped).
# Every step is deterministic given the Debian 12 sources: the search stops
# on its evaluation budget, measurements are exact, training is seeded, and
# the training command is recorded with paths relative to the work
# directory. --check trains into the work directory and compares the
# result's policy_version with the shipped artifact's (exit 1 if they differ).
set -euo pipefail
# Without HOME (cron, a service's clean environment): the account's home.
HOME="${HOME:-$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6)}"
[ -z "$HOME" ] || export HOME
cd "$(dirname "$0")/.."
repo="$(pwd)"

work="" corpus=""
out="configs/policies/default.plpolicy"
check=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --work) work="${2:?--work needs a directory}"; shift 2 ;;
    --corpus) corpus="${2:?--corpus needs a directory}"; shift 2 ;;
    --out) out="${2:?--out needs a file}"; shift 2 ;;
    --check) check=1; shift ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "train_default_policy.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$work" ] || [ -z "$corpus" ]; then
  caches="${XDG_CACHE_HOME:-${HOME:?is not set: pass --work and --corpus, or set XDG_CACHE_HOME}/.cache}"
  work="${work:-$caches/phaseloop/default-policy}"
  corpus="${corpus:-$caches/phaseloop/corpus-debian}"
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
[ "$check" -eq 0 ] || out="$work/default.plpolicy"
case "$out" in /*) ;; *) out="$repo/$out" ;; esac
mkdir -p "$(dirname "$out")"

tools/setup.sh
tools/bazel.sh build -c opt //tools:phaseloop //staging_harness/workers:session_worker \
  //offline_rl/learner:phaseloop-train
bin="$(tools/bazel.sh info -c opt bazel-bin 2>/dev/null)"
phaseloop="$bin/tools/phaseloop"
export PHASELOOP_TRAIN_BINARY="$bin/offline_rl/learner/phaseloop-train"

[ -f "$corpus/manifest.json" ] || "$phaseloop" corpus fetch-debian --out "$corpus"

episodes="$work/train_greedy_alloc.episodes"
if [ ! -f "$work/search.done" ]; then
  rm -f "$episodes"
  "$phaseloop" search --corpus "$corpus" --split train --max-ir-count 15000 \
    --strategy greedy --objective alloc_size --max-evaluations 366 --budget 600 \
    --step-timeout 600 --jobs 2 --seed 1 --run-id default-train-greedy \
    --episodes-out "$episodes" --json > "$work/search.json"
  touch "$work/search.done"
fi
# A step over --step-timeout depends on the machine; a crash or a verifier
# failure recurs on every machine (four nettle modules failed the same two
# steps in each of three runs), so only timed-out steps make the result
# machine-dependent.
# (grep -c counts matching lines: search.json is pretty-printed, one field
# per line; it exits 1 on no match, which is not an error here.)
failed="$(grep -c '"failed_steps": [1-9]' "$work/search.json" || true)"
timed_out="$(grep -c '"timed_out_steps": [1-9]' "$work/search.json" || true)"
if [ "${failed:-0}" -gt 0 ] && ! grep -q '"timed_out_steps"' "$work/search.json"; then
  echo "warning: $failed modules' searches had failed steps, and this search.json" \
    "(from an older phaseloop) does not say whether any timed out: their paths," \
    "the candidates and the policy may differ from another machine's" >&2
elif [ "${timed_out:-0}" -gt 0 ]; then
  echo "warning: $timed_out modules' searches had steps over --step-timeout:" \
    "their paths, the candidates and the policy may differ from another" \
    "machine's" >&2
elif [ "${failed:-0}" -gt 0 ]; then
  echo "note: $failed modules' searches had failed steps (a pass crashed or" \
    "broke the verifier; none timed out): the same on every machine" >&2
fi
limited="$(grep -o '"modules_time_limited": [0-9]*' "$work/search.json" | grep -o '[0-9]*$' || echo 0)"
if [ "${limited:-0}" -gt 0 ]; then
  echo "warning: the clock stopped $limited searches before their evaluation" \
    "budget: the candidates (and the policy) may differ from another machine's" >&2
fi

buffer="$work/train.db"
if [ ! -f "$work/candidates.json" ]; then
  rm -f "$buffer"
  "$phaseloop" buffer add --buffer "$buffer" --corpus "$corpus" --episodes "$episodes"
  "$phaseloop" candidates mine --buffer "$buffer" --corpus "$corpus" --split train \
    --objective alloc_size --max-candidates 24 --oz-prefix-variants \
    --fixed-candidate 'ozmf=tuned<Oz;merge-functions>' \
    --fixed-candidate 'ozi0=tuned<Oz;inline-threshold=0>' \
    --fixed-candidate 'ozim200=tuned<Oz;inline-threshold=-200>' \
    --codegen-variants machine-outliner \
    --max-ir-count 15000 --exclude lz4/programs/lz4cli --jobs 2 \
    --out "$work/candidates.json.tmp"
  mv "$work/candidates.json.tmp" "$work/candidates.json"
fi

# Trained inside the work directory with relative paths, so the command the
# artifact records (and with it the policy_version) is the same everywhere.
cp configs/learner/size_candidate_bc.yaml "$work/size_candidate_bc.yaml"
(cd "$work" && "$phaseloop" train --buffer train.db --config size_candidate_bc.yaml \
  --candidates candidates.json --seed 1 --threads 2 --out default.plpolicy.new)
mv "$work/default.plpolicy.new" "$out"

for mode in single topk; do
  "$phaseloop" eval --policy "$out" --corpus "$corpus" --split validation \
    --mode "$mode" --budget 10000 --jobs 2 --json > "$work/eval-$mode.json"
done
echo "policy: $out; evaluation (JSON): $work/eval-single.json, $work/eval-topk.json"

if [ "$check" -eq 1 ]; then
  version_of() { "$phaseloop" policy show "$1" --json | grep -o '"policy_version": "[0-9a-f]*"' | grep -o '[0-9a-f]*"$' | tr -d '"'; }
  shipped="$(version_of configs/policies/default.plpolicy)"
  retrained="$(version_of "$out")"
  echo "shipped policy_version $shipped; retrained $retrained"
  [ "$shipped" = "$retrained" ] || { echo "the retrained policy differs from the shipped one" >&2; exit 1; }
  echo "reproduced: the retrained policy is the shipped one"
fi
