#!/usr/bin/env bash
# Runs the system bazel with the project's disk cache outside the clone, so
# fresh clones (CI) and rebuilds reuse action outputs.
set -euo pipefail
cache="${PHASELOOP_BAZEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/phaseloop/bazel-disk}"
mkdir -p "$cache"
cmd="$1"; shift
case "$cmd" in
  build|test|run|coverage)
    exec bazel "$cmd" --disk_cache="$cache" "$@" ;;
  *)
    exec bazel "$cmd" "$@" ;;
esac
