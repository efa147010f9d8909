#!/usr/bin/env bash
# The canary controller's targets (issue 17), measured with real rollouts of
# the demo service (BENCHMARKS.md "Canary controller"):
#   A/A: candidate and stable behave the same (both pick -O3's pipeline;
#        different policy versions) — how many are rolled back (target: at
#        most 1 in 20);
#   +X %: the canary instance busy-waits X of every handler call's time
#        (`canary run --inject-canary-slowdown`) — how many fail at the first
#        step (target: >= 95 % for +10 %);
#   and each judged step's time from its start to its decision (target:
#        <= 60 s).
#
# Usage: tools/canary_benchmark.sh [--runs 20] [--aa-runs N] [--slow-runs N]
#          [--slowdown 0.10] [--out DIR]   (--runs sets both counts)
#        (after tools/bazel.sh build -c opt //tools:phaseloop
#         //compiler_driver/cc_wrapper:all
#         //canary/controller/testing:fixed_speed_policy)
set -euo pipefail
case "${1:-}" in  # the header above
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
aa_runs=20 slow_runs=20 slowdown=0.10 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) aa_runs="$2" slow_runs="$2"; shift 2 ;;
    --aa-runs) aa_runs="$2"; shift 2 ;;
    --slow-runs) slow_runs="$2"; shift 2 ;;
    --slowdown) slowdown="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "unknown argument '$1' (usage: --runs N | --aa-runs N --slow-runs N, --slowdown F, --out DIR; try --help)" >&2; exit 2 ;;
  esac
done
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${PHASELOOP_BIN:-$repo/bazel-bin}"
phaseloop="$bin/tools/phaseloop" tool="$bin/canary/controller/testing/fixed_speed_policy"
[ -x "$phaseloop" ] && [ -x "$tool" ] || {
  echo "build first: tools/bazel.sh build -c opt //tools:phaseloop //compiler_driver/cc_wrapper:all //canary/controller/testing:fixed_speed_policy" >&2
  exit 2
}
out="${out:-$(mktemp -d)}"
mkdir -p "$out"
export PHASELOOP_STATE_DIR="$out/state"
sed -e "s#^slo_dir: .*#slo_dir: $repo/configs/slo#" \
    -e "s#  workspace: .*#  workspace: $repo/canary/service/demo_workspace#" \
    -e "s#  judge: .*#  judge: $repo/configs/canary/rollout_judge.yaml#" \
    -e "s#^budget_policy: .*#budget_policy: $repo/configs/error_budget_policy.yaml#" \
    "$repo/configs/services/demo.yaml" >"$out/demo.yaml"
"$tool" --pick o3 --seed 1000 --out "$out/stable.plpolicy" >/dev/null
"$phaseloop" policy serve --dir "$out/state/policies" --listen 127.0.0.1:0 \
  --address-file "$out/store.addr" >"$out/store.log" 2>&1 &
store_pid=$!
trap 'kill $store_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/store.addr" ] && break; sleep 0.1; done
store="$(cat "$out/store.addr")"
"$phaseloop" policy push --store "$store" --channel stable "$out/stable.plpolicy" >/dev/null

one() {  # one KIND I: a rollout, its JSON in $out/KIND-I.json
  local kind="$1" i="$2" extra=()
  "$tool" --pick o3 --seed "$((i + 1))" --out "$out/$kind-$i.plpolicy" >/dev/null
  [ "$kind" = aa ] || extra=(--inject-canary-slowdown "$slowdown")
  "$phaseloop" canary run --service "$out/demo.yaml" --candidate "$out/$kind-$i.plpolicy" \
    --canary-id "$kind-$i" --policy-store "$store" --staging-lower-bound 1.0 \
    --stable "$(head -c 32 <<<"$("$phaseloop" policy list --store "$store" --json |
      python3 -c 'import json,sys; print([c["policy_version"] for c in json.load(sys.stdin)["channels"] if c["name"]=="stable"][0])')")" \
    "${extra[@]}" --json >"$out/$kind-$i.json" 2>"$out/$kind-$i.err" || true
  # Keep stable where it was: a promoted A/A candidate is rolled back.
  if python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["phase"]!="promoted")' "$out/$kind-$i.json" 2>/dev/null; then
    "$phaseloop" policy rollback --store "$store" --channel stable >/dev/null
  fi
  python3 - "$out/$kind-$i.json" "$kind" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
steps = r.get("steps", [])
first = steps[0]["outcome"] if steps else "-"
lat = [ (int(s["decided_ms"]) - int(s["started_ms"])) / 1000 for s in steps ]
def latency(step):  # the judged latency metric: p95 ratio and p-value
    for m in step.get("metrics", []):
        if m.get("name") == "latency_ms":
            return f"{m.get('ratio', 0):.3f}/p{m.get('p_value', 0):.3f}"
    return "-"
print(f"{sys.argv[2]:3} {sys.argv[3]:>3}  {r['phase']:12} first step {first:13} "
      f"decision after {', '.join(f'{x:.0f}' for x in lat)} s  "
      f"p95 ratio/p {' '.join(latency(s) for s in steps)}")
PY
}

for i in $(seq "$aa_runs"); do one aa "$i"; done
for i in $(seq "$slow_runs"); do one slow "$i"; done
python3 - "$out" "$slowdown" <<'PY'
import glob, json, os, sys
out, slowdown = sys.argv[1], float(sys.argv[2])
def load(kind):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, f"{kind}-*.json")))
            if os.path.getsize(p) > 0]
aa, slow = load("aa"), load("slow")
rolled = sum(r["phase"] == "rolled_back" for r in aa)
aborted = sum(r["phase"] == "aborted" for r in aa + slow)
caught = sum(bool(r.get("steps")) and r["steps"][0]["outcome"] == "Fail" for r in slow)
lat = sorted((int(s["decided_ms"]) - int(s["started_ms"])) / 1000
             for r in aa + slow for s in r.get("steps", []))
print(f"\nA/A: {rolled}/{len(aa)} rolled back (target <= 5 %)")
print(f"+{100*slowdown:.0f} %: {caught}/{len(slow)} failed at the first step (target >= 95 %)")
print(f"aborted: {aborted}")
if lat:
    print(f"step start -> decision: median {lat[len(lat)//2]:.0f} s, max {lat[-1]:.0f} s "
          f"over {len(lat)} steps (target <= 60 s)")
PY
