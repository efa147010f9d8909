#!/usr/bin/env bash
# Quality of search alone on a corpus split (issue #4's benchmark): greedy
# search per objective and budget, each run reporting every objective's
# metrics (alloc_oz_ratio, text_oz_ratio, geomean_oz_ratio, over_oz, gym_score).
#   tools/search_quality.sh CORPUS_DIR [SPLIT] [BUDGETS...]
# Defaults: split validation, budgets 1 10. Writes OUT_DIR (default
# /tmp/phaseloop-search-quality) with one JSON file per run and prints a
# table. Needs: tools/bazel.sh build -c opt //tools:phaseloop
set -euo pipefail
case "${1:-}" in  # the header above
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
cd "$(dirname "$0")/.."
corpus="${1:?usage: tools/search_quality.sh CORPUS_DIR [SPLIT] [BUDGETS...]}"
split="${2:-validation}"
shift $(( $# >= 2 ? 2 : $# ))
budgets=("${@:-1 10}")
[[ $# -gt 0 ]] && budgets=("$@") || budgets=(1 10)
out="${OUT_DIR:-/tmp/phaseloop-search-quality}"
mkdir -p "$out"
bin="$(tools/bazel.sh info -c opt bazel-bin 2>/dev/null)/tools/phaseloop"
printf '%-10s %6s %14s %14s %16s %9s %10s %8s\n' objective budget alloc_oz_ratio \
  text_oz_ratio geomean_oz_ratio over_oz gym_score modules
for objective in alloc_size text_size ir_count; do
  for budget in "${budgets[@]}"; do
    json="$out/${objective}-${budget}s.json"
    "$bin" search --corpus "$corpus" --split "$split" --strategy greedy \
      --objective "$objective" --budget "$budget" --jobs 2 \
      --episodes-out "$out/${objective}-${budget}s.episodes" --json \
      > "$json" 2> "$out/${objective}-${budget}s.log"
    python3 - "$json" "$objective" "$budget" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d.get("metrics", d)
def g(k):
    v = s.get(k)
    return "n/a" if v is None else f"{v:.4f}"
print(f"{sys.argv[2]:<10} {sys.argv[3]:>6} {g('alloc_oz_ratio'):>14} "
      f"{g('text_oz_ratio'):>14} "
      f"{g('geomean_oz_ratio'):>16} {g('over_oz'):>9} {g('gym_score'):>10} "
      f"{s.get('modules_measured', len(d.get('modules', []))):>8}")
PY
  done
done
