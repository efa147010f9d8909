#!/usr/bin/env bash
# The README's main command: install what is missing, build, run the main job.
# Until the closed loop exists, the main job is `phaseloop survey` on the
# bundled programs: O0/O3/Oz ir_count and text_size, and a short greedy search.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/bazel.sh build -c opt //tools:phaseloop //staging_harness/workers:session_worker
exec bazel-bin/tools/phaseloop survey --corpus compiler_driver/fixtures "$@"
