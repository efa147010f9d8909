#!/usr/bin/env bash
# Looks at a phaseloop HTML report in a real browser: renders PAGE in headless
# Chromium (Debian's chromium package, tools/setup.sh installs it) and passes
# only when every chart drew and the page fetched nothing.
#
#   tools/check_report.sh PAGE.html [--expect-charts N] [--screenshot OUT.png]
#
# Checks, all reported, not only the first that fails:
#   - self-contained: no src/url()/@import/srcset/<link href> that loads
#     anything but a data: URL, and no link to the network (http:, https:,
#     //host) in any src or href;
#   - the page's own chart check (common/report/html_page.h) ran after load
#     and found every `<svg class="pl-chart">` laid out with all its marks
#     visible inside it (what it wrote on <body>: data-charts-drawn equals
#     data-charts-expected, the number of charts in the file);
#   - the browser fetched nothing (data-resources-fetched, with all host
#     names resolving to nothing while it runs);
#   - with --expect-charts N: the page has N charts.
# --screenshot OUT.png also saves what the page looks like (1280 px wide,
# --height PX tall, 2400 by default).
#
# Exit status: 0 every check passed; 1 a check failed (each failure says
# which and why) or Chromium could not render the page; 2 bad usage, no such
# page, or no Chromium (PHASELOOP_CHROMIUM names a binary to use instead of
# chromium / chromium-browser on PATH).
set -uo pipefail

me="check_report"
usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit "${1:-2}"
}
bad_usage() {
  echo "$me: $1 (usage: tools/check_report.sh PAGE.html [--expect-charts N] [--screenshot OUT.png])" >&2
  exit 2
}

page="" expect="" shot="" height=2400 budget_ms=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --expect-charts | --screenshot | --height)
      [ $# -ge 2 ] || bad_usage "$1 needs a value"
      case "$1" in
        --expect-charts) expect="$2" ;;
        --screenshot) shot="$2" ;;
        --height) height="$2" ;;
      esac
      shift 2 ;;
    --expect-charts=*) expect="${1#*=}"; shift ;;
    --screenshot=*) shot="${1#*=}"; shift ;;
    --height=*) height="${1#*=}"; shift ;;
    -h | --help) usage 0 ;;
    -*) bad_usage "unknown option $1" ;;
    *)
      [ -z "$page" ] || bad_usage "one page at a time ($page and $1 given)"
      page="$1"; shift ;;
  esac
done
[ -n "$page" ] || bad_usage "no page given"
[[ -z "$expect" || "$expect" =~ ^[0-9]+$ ]] ||
  bad_usage "--expect-charts takes a count of charts, not '$expect'"
[[ "$height" =~ ^[1-9][0-9]*$ ]] || bad_usage "--height takes pixels, not '$height'"
[ -f "$page" ] && [ -r "$page" ] ||
  { echo "$me: $page: no such readable file (give the report's HTML file)" >&2; exit 2; }

chromium="${PHASELOOP_CHROMIUM:-}"
if [ -n "$chromium" ]; then
  [ -x "$chromium" ] || { echo "$me: PHASELOOP_CHROMIUM=$chromium is not an executable file" >&2; exit 2; }
else
  chromium="$(command -v chromium || command -v chromium-browser || true)"
  if [ -z "$chromium" ]; then
    echo "$me: no Chromium on PATH (looked for chromium and chromium-browser):" \
      "run tools/setup.sh, which installs Debian's chromium package," \
      "or set PHASELOOP_CHROMIUM to a Chromium binary" >&2
    exit 2
  fi
fi

abs="$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
failures=()

# 1. Self-contained, read from the file itself (before any browser).
# Every attribute or CSS reference that names something to load or open.
refs="$(grep -oiE "(^|[^a-z:-])(src|href|srcset|poster|action|xlink:href)[[:space:]]*=[[:space:]]*(\"[^\"]*\"|'[^']*'|[^[:space:]>]+)|url\\([^)]*\\)|@import[^;]*|<link[^>]*>" "$page" || true)"
while IFS= read -r ref; do
  ref="${ref#[!a-zA-Z<@]}"  # the character before an attribute's name
  [ -n "$ref" ] || continue
  lower="$(printf '%s' "$ref" | tr 'A-Z' 'a-z')"
  if [[ "$lower" == "<link"* ]]; then
    value="$(printf '%s' "$lower" | sed -n -E "s/.*[[:space:]]href[[:space:]]*=[[:space:]]*[\"']?([^\"' >]*).*/\1/p")"
  else
    value="$(printf '%s' "$lower" | sed -E "s/^[^=(]*[=(][[:space:]]*//; s/^@import[[:space:]]*//; s/^[\"']//; s/[\"')]*$//")"
  fi
  case "$value" in
    http:* | https:* | //* | ftp:* | ws:* | wss:*)
      failures+=("points at the network: $ref") ;;
    '' | data:* | '#'*) ;;
    *)
      # A link the reader may follow (<a href>) loads nothing; the rest do.
      [[ "$lower" =~ ^(xlink:)?href ]] ||
        failures+=("loads a file from beside the page (not self-contained): $ref") ;;
  esac
done <<<"$refs"
in_file="$(grep -oE '<svg[^>]*class="([^"]* )?pl-chart( [^"]*)?"' "$page" | wc -l)"

# 2. Rendered: the page's chart check, as the browser's DOM shows it.
tmp="$(mktemp -d "${TMPDIR:-/tmp}/check_report.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
flags=(--headless --disable-gpu --disable-dev-shm-usage --no-first-run
  --no-default-browser-check --disable-extensions --disable-sync
  --disable-background-networking --disable-component-update
  --user-data-dir="$tmp/profile" --host-resolver-rules="MAP * ~NOTFOUND"
  --hide-scrollbars --virtual-time-budget="$budget_ms")
# Chromium's sandbox refuses to run as root; elsewhere it stays on.
[ "$(id -u)" -ne 0 ] || flags+=(--no-sandbox)
run_chromium() {
  HOME="$tmp" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" \
    timeout 120 "$chromium" "${flags[@]}" "$@"
}
start_ns="$(date +%s%N)"
run_chromium --dump-dom "file://$abs" >"$tmp/dom.html" 2>"$tmp/chromium.log"
status=$?
seconds="$(awk -v a="$start_ns" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
if [ $status -ne 0 ] || ! grep -q '<body' "$tmp/dom.html"; then
  echo "$me: $page: $chromium could not render it (exit $status); the end of its log:" >&2
  tail -n 15 "$tmp/chromium.log" | sed 's/^/    /' >&2
  exit 1
fi
body="$(grep -o '<body[^>]*>' "$tmp/dom.html" | head -n 1)"
attr() { printf '%s' "$body" | sed -n "s/.* $1=\"\\([^\"]*\\)\".*/\\1/p"; }
drawn="$(attr data-charts-drawn)"
expected="$(attr data-charts-expected)"
fetched="$(attr data-resources-fetched)"
script_error="$(attr data-charts-error)"
notes="$(awk '/<pre id="pl-chart-check"/ { on = 1 } on { print } on && /<\/pre>/ { exit }' "$tmp/dom.html" |
  sed -E 's/<[^>]*>//g; s/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' |
  sed '/^[[:space:]]*$/d; s/^/    /')"

if [ -n "$script_error" ]; then
  failures+=("the page's chart check failed in the browser: $script_error")
elif [ -z "$drawn" ] || [ -z "$expected" ]; then
  failures+=("the page's chart check did not run (no data-charts-drawn on <body> after load): build the page with common/report/html_page.h, and look for a script error")
else
  if [ "$expected" -ne "$in_file" ]; then
    failures+=("the file has $in_file charts but the browser laid out $expected (broken markup around a chart?)")
  fi
  if [ "$drawn" -ne "$expected" ]; then
    failures+=("$((expected - drawn)) of $expected charts did not draw")
  fi
  if [ -n "$fetched" ] && [ "$fetched" -ne 0 ]; then
    failures+=("the page asked the browser for $fetched resource(s) while loading; a report must be self-contained")
  fi
fi
if [ -n "$expect" ] && [ "$in_file" -ne "$expect" ]; then
  failures+=("it has $in_file charts, --expect-charts says $expect")
fi

if [ -n "$shot" ]; then
  shot_abs="$(cd "$(dirname "$shot")" 2>/dev/null && pwd)/$(basename "$shot")" ||
    { echo "$me: --screenshot $shot: its directory does not exist" >&2; exit 2; }
  if ! run_chromium --window-size="1280,$height" --screenshot="$shot_abs" \
    "file://$abs" >/dev/null 2>"$tmp/screenshot.log" || [ ! -s "$shot_abs" ]; then
    failures+=("no screenshot written to $shot (chromium: $(tail -n 1 "$tmp/screenshot.log"))")
  fi
fi

version="$("$chromium" --version 2>/dev/null | head -n 1)"
if [ ${#failures[@]} -gt 0 ]; then
  echo "$me: $page: FAILED ($version, ${seconds} s):" >&2
  printf '  - %s\n' "${failures[@]}" >&2
  [ -z "$notes" ] || { echo "  what the page's check found:" >&2; echo "$notes" >&2; }
  exit 1
fi
echo "$me: $page: $drawn of $expected charts drew, nothing fetched ($version, ${seconds} s)${shot:+; screenshot $shot}"
