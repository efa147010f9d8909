#!/bin/bash
# Every command block of README.md runs as written (issue #15): each fenced
# ```sh or ```bash block is run by bash -e in a fresh scratch directory that
# looks like a built checkout (WORKSPACE, bazel-bin/tools/phaseloop,
# configs/, and `phaseloop` on PATH), and must exit 0 within 90 s. A block that is not
# meant to run here says so just above its fence, with the reason:
#   <!-- readme-test: skip (installs packages and runs every test) -->
# and is listed as skipped. Blocks that run `rewards run` must report at
# least one reward (the README promises rewards from its example).
#
# Usage: readme_blocks_test.sh --readme README.md --phaseloop BIN
#            --configs FILE...   (files under configs/, copied as they are)
set -u

readme=""
phaseloop=""
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --readme) readme="$2"; shift 2 ;;
    --phaseloop) phaseloop="$2"; shift 2 ;;
    --configs) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
        configs+=("$1"); shift; done ;;
    *) echo "readme_blocks_test: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$readme" ] || [ -z "$phaseloop" ]; then
  echo "readme_blocks_test: give --readme FILE and --phaseloop BIN" >&2
  exit 2
fi
phaseloop="$(cd "$(dirname "$phaseloop")" && pwd)/$(basename "$phaseloop")"
root="$PWD"
tmp="${TEST_TMPDIR:-$(mktemp -d)}/readme_blocks"
rm -rf "$tmp" && mkdir -p "$tmp/blocks"

# Split the README into blocks: blocks/N.sh, blocks/N.skip (the reason, when
# marked), blocks/N.line (where the fence is).
awk -v dir="$tmp/blocks" '
  /^<!-- readme-test: skip/ {
    reason = $0; sub(/^<!-- readme-test: skip */, "", reason);
    sub(/ *-->.*$/, "", reason); pending = reason; next }
  !inside && /^```(sh|bash)[ \t]*$/ {
    inside = 1; n++; file = dir "/" n ".sh"; printf "" > file;
    print NR > (dir "/" n ".line");
    if (pending != "") print pending > (dir "/" n ".skip");
    pending = ""; next }
  inside && /^```/ { inside = 0; close(file); next }
  inside { print > file; next }
  /^[ \t]*$/ { next }
  { pending = "" }
' "$readme"

failures=0
ran=0
for block in $(ls "$tmp/blocks"/*.sh | sort -V); do
  n="$(basename "$block" .sh)"
  line="$(cat "$tmp/blocks/$n.line")"
  if [ -f "$tmp/blocks/$n.skip" ]; then
    echo "SKIP README.md:$line $(cat "$tmp/blocks/$n.skip")"
    continue
  fi
  # A scratch checkout: the built binary where the README says it is.
  work="$tmp/run$n"
  mkdir -p "$work/bazel-bin/tools" "$work/path"
  touch "$work/WORKSPACE"
  ln -s "$phaseloop" "$work/bazel-bin/tools/phaseloop"
  ln -s "$phaseloop" "$work/path/phaseloop"
  for f in "${configs[@]}"; do
    mkdir -p "$work/$(dirname "$f")" && cp "$root/$f" "$work/$f"
  done
  echo "RUN  README.md:$line"
  sed 's/^/     | /' "$block"
  # Its own session, so whatever it leaves running is stopped afterwards.
  (cd "$work" && PATH="$work/path:$PATH" HOME="$work" setsid -w sh -c \
      'echo $$ > session; exec timeout 90 bash -e "$0"' "$block" \
      >"$work/stdout" 2>"$work/stderr")
  rc=$?
  session="$(cat "$work/session" 2>/dev/null)"
  [ -n "$session" ] && pkill -KILL -s "$session" 2>/dev/null
  ran=$((ran + 1))
  if [ "$rc" -ne 0 ]; then
    echo "FAIL README.md:$line exited $rc"
    failures=$((failures + 1))
  elif grep -q 'rewards run' "$block" &&
      ! grep -Eq '^rewards +[1-9]' "$work/stdout"; then
    echo "FAIL README.md:$line: rewards run gave no rewards"
    failures=$((failures + 1))
  fi
  sed 's/^/     stdout: /' "$work/stdout" | head -40
  sed 's/^/     stderr: /' "$work/stderr" | tail -20
done

echo "$ran blocks run, $failures failed"
if [ "$ran" -eq 0 ]; then
  echo "no runnable block found in $readme" >&2
  exit 1
fi
[ "$failures" -eq 0 ]
