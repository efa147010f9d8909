#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test,
# then the fast subset again under ASan + UBSan (tools/sanitize.sh asan;
# issue 19). Tests always run (--nocache_test_results): a result kept in the
# disk cache from an earlier run would hide a flaky test. The builds stay
# cached (the ASan build sits beside the plain one: --platform_suffix).
set -euo pipefail
case "${1:-}" in  # the header above
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
cd "$(dirname "$0")/.."
tools/setup.sh
tools/bazel.sh test --nocache_test_results //... "$@"
tools/sanitize.sh asan "$@"
