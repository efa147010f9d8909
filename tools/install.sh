#!/usr/bin/env bash
# Installs phaseloop's binaries (phaseloop, phaseloop-cc, phaseloop-c++,
# phaseloop-cc-opt, phaseloop-session-worker, phaseloop-train) into
# PREFIX/bin, built optimised, and the shipped default policy into
# PREFIX/share/phaseloop/policies (phaseloop-cc's default).
#   tools/install.sh [--prefix DIR]      (default: $HOME/.local)
# phaseloop-cc finds phaseloop-cc-opt beside itself: keep them together.
set -euo pipefail
# Without HOME (cron, a service's clean environment): the account's home.
HOME="${HOME:-$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6)}"
[ -z "$HOME" ] || export HOME

prefix=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
prefix="${prefix:-${HOME:?is not set: pass --prefix DIR}/.local}"
# Relative to the caller's directory, and ~ as a shell would read it.
case "$prefix" in
  "~") prefix="${HOME:?is not set: pass --prefix DIR}" ;;
  "~/"*) prefix="${HOME:?is not set: pass --prefix DIR}/${prefix#\~/}" ;;
esac
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
cd "$(dirname "$0")/.."

# The binaries need no Debian source packages (those are for the tests).
tools/setup.sh --no-sources
targets=(//tools:phaseloop //compiler_driver/cc_wrapper:phaseloop-cc
         //compiler_driver/cc_wrapper:phaseloop-c++
         //compiler_driver/cc_wrapper:phaseloop-cc-opt
         //staging_harness/workers:session_worker
         //offline_rl/learner:phaseloop-train)
tools/bazel.sh build -c opt "${targets[@]}"
bin="$(tools/bazel.sh info -c opt bazel-bin 2>/dev/null)"
mkdir -p "$prefix/bin"
for path in tools/phaseloop compiler_driver/cc_wrapper/phaseloop-cc \
            compiler_driver/cc_wrapper/phaseloop-c++ \
            compiler_driver/cc_wrapper/phaseloop-cc-opt \
            offline_rl/learner/phaseloop-train; do
  # Copy to a temporary name and rename: a build using the old binary keeps
  # a whole file.
  install -m 0755 "$bin/$path" "$prefix/bin/.$(basename "$path").new"
  mv -f "$prefix/bin/.$(basename "$path").new" "$prefix/bin/$(basename "$path")"
done
# phaseloop search finds its session worker beside it under this name.
install -m 0755 "$bin/staging_harness/workers/session_worker" \
  "$prefix/bin/.phaseloop-session-worker.new"
mv -f "$prefix/bin/.phaseloop-session-worker.new" "$prefix/bin/phaseloop-session-worker"
# The default policy phaseloop-cc uses when none is given.
if [ -f configs/policies/default.plpolicy ]; then
  mkdir -p "$prefix/share/phaseloop/policies"
  install -m 0644 configs/policies/default.plpolicy \
    "$prefix/share/phaseloop/policies/.default.plpolicy.new"
  mv -f "$prefix/share/phaseloop/policies/.default.plpolicy.new" \
    "$prefix/share/phaseloop/policies/default.plpolicy"
fi
echo "installed phaseloop, phaseloop-cc, phaseloop-c++, phaseloop-cc-opt, phaseloop-session-worker, phaseloop-train in $prefix/bin"
