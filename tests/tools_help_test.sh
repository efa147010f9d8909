#!/usr/bin/env bash
# Every script under tools/ parses whole (bash -n, py_compile: an error after
# its --help case would pass unseen, as bash reads lazily), is executable,
# and answers --help with what it does and exit 0, before doing anything
# (setup.sh installs nothing, run.sh builds nothing, fetch_sources.sh
# fetches no package named "--help") — with HOME and without it (cron, a
# service's clean environment). tools/bazel.sh is Bazel itself and passes
# --help on to it: it is only parsed.
set -uo pipefail
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
scratch="${TEST_TMPDIR:-$(mktemp -d)}"
for script in "$@"; do
  name="${script##*/}"
  path="$PWD/$script"
  case "$name" in
    *.py) python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' \
            "$path" || fail "$name does not parse" ;;
    *) bash -n "$path" || fail "$name does not parse" ;;
  esac
  [ -x "$path" ] || fail "$name is not executable"
  [ "$name" = bazel.sh ] && continue
  for home in with without; do
    if [ "$home" = with ]; then
      out="$(cd "$scratch" && timeout 20 "$path" --help 2>&1)"; rc=$?
    else
      out="$(cd "$scratch" && timeout 20 env -u HOME "$path" --help 2>&1)"; rc=$?
    fi
    if [ "$rc" -ne 0 ]; then
      fail "$name --help ($home HOME) exited $rc: $(echo "$out" | head -3)"
    elif [ "$(printf '%s\n' "$out" | grep -c .)" -lt 2 ]; then
      fail "$name --help ($home HOME) said too little: $out"
    fi
  done
  echo "checked: $name ($(printf '%s\n' "$out" | head -1))"
done
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
