#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test.
# Tests always run (--nocache_test_results): a result kept in the disk cache
# from an earlier run would hide a flaky test. The build stays cached.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/bazel.sh test --nocache_test_results //... "$@"
