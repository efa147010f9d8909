#!/usr/bin/env bash
# Every script under tools/ answers --help with what it does and exit 0,
# before doing anything (setup.sh installs nothing, run.sh builds nothing,
# fetch_sources.sh fetches no package named "--help"). tools/bazel.sh is
# Bazel itself and passes --help on to it; it is left out.
set -uo pipefail
failures=0
for script in "$@"; do
  name="${script##*/}"
  [ "$name" = bazel.sh ] && continue
  case "$name" in
    *.py) out="$(cd /tmp && timeout 20 python3 "$OLDPWD/$script" --help 2>&1)"; rc=$? ;;
    *) out="$(cd /tmp && timeout 20 bash "$OLDPWD/$script" --help 2>&1)"; rc=$? ;;
  esac
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: $name --help exited $rc:"; echo "$out" | head -5
    failures=$((failures + 1))
  elif [ "$(printf '%s\n' "$out" | grep -c .)" -lt 2 ]; then
    echo "FAIL: $name --help said too little: $out"
    failures=$((failures + 1))
  else
    echo "ok: $name ($(printf '%s\n' "$out" | head -1))"
  fi
done
[ "$failures" -eq 0 ] || { echo "$failures script(s) without a working --help"; exit 1; }
