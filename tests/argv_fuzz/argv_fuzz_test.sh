#!/usr/bin/env bash
# The CI slice of the differential argv fuzzer: runs argv_fuzz with the
# arguments BUILD gives (a fixed seed, a bounded number of cases, the
# allowlist of known disagreements); argv_fuzz's exit status is the verdict.
set -euo pipefail
fuzz="$1"; shift
exec "$fuzz" "$@"
