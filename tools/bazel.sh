#!/usr/bin/env bash
# Runs the system bazel with the project's disk cache outside the clone, so
# fresh clones (CI) and rebuilds reuse action outputs.
# PHASELOOP_BAZEL_OUTPUT_BASE=DIR gives this caller its own Bazel server and
# output tree (DIR), with the convenience symlinks at DIR/bazel-bin etc., so
# several builds of one checkout can run side by side.
set -euo pipefail
# Without HOME (cron, a service's clean environment): the account's home.
HOME="${HOME:-$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6)}"
[ -z "$HOME" ] || export HOME
cache="${PHASELOOP_BAZEL_CACHE:-${XDG_CACHE_HOME:-${HOME:?is not set and the account has no home: set PHASELOOP_BAZEL_CACHE}/.cache}/phaseloop/bazel-disk}"
mkdir -p "$cache"
startup=()
build_flags=()
if [ -n "${PHASELOOP_BAZEL_OUTPUT_BASE:-}" ]; then
  mkdir -p "$PHASELOOP_BAZEL_OUTPUT_BASE"
  startup=(--output_base="$PHASELOOP_BAZEL_OUTPUT_BASE")
  build_flags=(--symlink_prefix="$PHASELOOP_BAZEL_OUTPUT_BASE/bazel-")
fi
cmd="$1"; shift
case "$cmd" in
  build|test|run|coverage)
    exec bazel "${startup[@]}" "$cmd" --disk_cache="$cache" "${build_flags[@]}" "$@" ;;
  *)
    exec bazel "${startup[@]}" "$cmd" "$@" ;;
esac
