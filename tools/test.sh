#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/bazel.sh test //... "$@"
