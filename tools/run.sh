#!/usr/bin/env bash
# The README's main command: install what is missing, build, run the main
# job — the closed loop (`phaseloop loop`, configs/loop/demo.yaml) on
# embedded defaults: an embedded Kafka cluster, a policy store and a replay
# buffer under the state directory ($PHASELOOP_STATE_DIR, else
# ~/.local/state/phaseloop). Arguments go to `phaseloop loop` (e.g.
# --iterations 5); run it again to resume or continue. Then the report.
set -euo pipefail
case "${1:-}" in  # the header above
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
cd "$(dirname "$0")/.."
tools/setup.sh
tools/bazel.sh build -c opt //tools:phaseloop //offline_rl/learner:phaseloop-train \
  //compiler_driver/cc_wrapper:all
bazel-bin/tools/phaseloop loop "$@"
exec bazel-bin/tools/phaseloop report
