#!/usr/bin/env bash
# End-to-end: "Use phaseloop in your Bazel build" (README). A small real
# Bazel 4.2.3 workspace (C library, C++ binary, cc_test; -c opt) is built by a
# nested Bazel with the toolchain `phaseloop toolchain bazel` generates and
# the README's .bazelrc lines.
#
# Checks; every failure names the step and its log:
#   a. `bazel build //...` and `bazel test //...` pass;
#   b. `phaseloop stats --json`: one `optimized` decision per compile action
#      the build ran (CppCompile spawns in --execution_log_json_file);
#   c. after a server restart, a second build with the same policy executes
#      zero compile actions (no CppCompile spawn, no new decision record);
#   d. changing the policy file's content (fixed:default<Oz>) re-runs every
#      compile action, each optimised again;
#   e. the binary prints the expected results;
#   f. with the shipped default policy (`--artifact`, topk) and --copt=-Oz,
#      every compile runs again, each optimised decision names the artifact's
#      policy_version and was measured (an outcome cache miss), and the tests
#      and the binary still pass;
#   g. a second machine (its own output root and server, every core kept
#      busy by spinning loops) builds the same targets: every compile action
#      has the same action key on both, and each key's object is
#      byte-identical (topk's budget counts work, never the clock, so a
#      shared cache may hold one object per key; the outcome cache is
#      emptied first, so b measures). //big holds a generated
#      C file of ~6,000 IR instructions, large enough that a clock budget
#      measured fewer candidates under load;
#   h. a trust file (`--trust-file`): copied into the package and named by
#      cc_wrapper.sh; the shipped default still runs (trusted by content)
#      inside Bazel's sandbox, its choices taken from the outcome cache (the
#      compile actions ran again: the trust file is their input); a trust file listing no key trusts nothing,
#      so every compile runs again (the trust file is a compile input) and
#      falls back to plain clang, counted as policy_untrusted, and the tests
#      and the binary still pass.
#
# Usage: bazel_build_test.sh --phaseloop PHASELOOP_CLI --cc PHASELOOP_CC
# The nested Bazel never uses the network: its WORKSPACE points at this
# repository's offline shims, like ours does.
set -euo pipefail

# On failure the nested builds' logs go to the test's undeclared outputs.
fail() {
  echo "FAIL: $*" >&2
  if [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ] && [ -d "${logs:-}" ]; then
    cp -r "$logs" "$TEST_UNDECLARED_OUTPUTS_DIR/" || true
  fi
  exit 1
}
step() { echo "== $*"; }

phaseloop_cli="" wrapper_cc=""
while [ $# -gt 0 ]; do
  case "$1" in
    --phaseloop) phaseloop_cli="$2"; shift 2 ;;
    --cc) wrapper_cc="$2"; shift 2 ;;
    *) fail "unknown argument '$1' (usage: --phaseloop PATH --cc PATH)" ;;
  esac
done
[ -n "$phaseloop_cli" ] && [ -n "$wrapper_cc" ] || fail "--phaseloop and --cc are required"
phaseloop_cli="$(readlink -f "$phaseloop_cli")"
wrapper_cc="$(readlink -f "$wrapper_cc")"
for tool in bazel clang-16; do
  command -v "$tool" >/dev/null || fail "$tool not found on PATH (tools/setup.sh installs it)"
done

# This script is a runfiles symlink into the source tree: the repository
# root, whose offline shims the nested WORKSPACE uses, is two levels up.
repo="$(dirname "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")")"
shims="$repo/third_party/bazel_shims"
[ -f "$shims/rules_cc/cc/defs.bzl" ] || fail "no offline shims under $shims"

work="${TEST_TMPDIR:-$(mktemp -d)}/bazel_build"
rm -rf "$work"
ws="$work/ws" spool="$work/spool" outcomes="$work/outcomes" logs="$work/logs"
mkdir -p "$ws/lib" "$ws/app" "$ws/big" "$logs" "$work/home" "$work/home2"

# --- the user's workspace ----------------------------------------------------
cat >"$ws/WORKSPACE" <<EOF
workspace(name = "demo")

# Offline Bazel 4.2.3, exactly as phaseloop's own WORKSPACE.
local_repository(name = "rules_cc", path = "$shims/rules_cc")
local_repository(name = "rules_java", path = "$shims/rules_java")
local_repository(name = "platforms", path = "/usr/share/bazel/platforms")
local_repository(name = "remote_coverage_tools", path = "$shims/remote_coverage_tools")
EOF
cat >"$ws/lib/BUILD" <<'EOF'
cc_library(
    name = "numbers",
    srcs = ["adler32.c", "gcd.c", "primes.c"],
    hdrs = ["numbers.h"],
    visibility = ["//visibility:public"],
)
EOF
cat >"$ws/lib/numbers.h" <<'EOF'
#ifndef LIB_NUMBERS_H_
#define LIB_NUMBERS_H_
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
long Gcd(long a, long b);
int CountPrimes(int limit);
uint32_t Adler32(const unsigned char* data, size_t size);
#ifdef __cplusplus
}
#endif
#endif
EOF
cat >"$ws/lib/gcd.c" <<'EOF'
#include "lib/numbers.h"
long Gcd(long a, long b) {
  while (b != 0) {
    long t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}
EOF
cat >"$ws/lib/primes.c" <<'EOF'
#include <stdlib.h>
#include "lib/numbers.h"
int CountPrimes(int limit) {
  if (limit < 2) return 0;
  char* composite = calloc((size_t)limit + 1, 1);
  if (composite == NULL) return -1;
  int count = 0;
  for (int i = 2; i <= limit; ++i) {
    if (composite[i]) continue;
    ++count;
    for (long j = (long)i * i; j <= limit; j += i) composite[j] = 1;
  }
  free(composite);
  return count;
}
EOF
cat >"$ws/lib/adler32.c" <<'EOF'
#include "lib/numbers.h"
uint32_t Adler32(const unsigned char* data, size_t size) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < size; ++i) {
    a = (a + data[i]) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}
EOF
cat >"$ws/app/BUILD" <<'EOF'
cc_binary(
    name = "report",
    srcs = ["main.cc", "report.cc", "report.h"],
    deps = ["//lib:numbers"],
)

cc_test(
    name = "numbers_test",
    srcs = ["numbers_test.cc"],
    deps = ["//lib:numbers"],
)
EOF
cat >"$ws/app/report.h" <<'EOF'
#include <string>
std::string Report();
EOF
cat >"$ws/app/report.cc" <<'EOF'
#include "app/report.h"
#include <sstream>
#include <string>
#include "lib/numbers.h"
std::string Report() {
  const std::string word = "phaseloop";
  std::ostringstream out;
  out << "gcd=" << Gcd(1071, 462) << " primes=" << CountPrimes(100000)
      << " adler32=" << Adler32(reinterpret_cast<const unsigned char*>(word.data()), word.size());
  return out.str();
}
EOF
cat >"$ws/app/main.cc" <<'EOF'
#include <iostream>
#include "app/report.h"
int main() { std::cout << Report() << "\n"; }
EOF
cat >"$ws/app/numbers_test.cc" <<'EOF'
#include <cstdio>
#include "lib/numbers.h"
int main() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) { if (!ok) { std::puts(what); ++failures; } };
  check(Gcd(1071, 462) == 21, "Gcd(1071, 462) != 21");
  check(Gcd(-12, 18) == 6, "Gcd(-12, 18) != 6");
  check(CountPrimes(1000) == 168, "CountPrimes(1000) != 168");
  check(Adler32(reinterpret_cast<const unsigned char*>("Wikipedia"), 9) == 0x11E60398u,
        "Adler32(Wikipedia) != 0x11E60398");
  return failures == 0 ? 0 : 1;
}
EOF

# 48 generated functions (loops, switches, tables): topk measures few
# candidates on it, so its object depends on the budget's unit.
cat >"$ws/big/BUILD" <<'EOF'
cc_library(
    name = "big",
    srcs = ["big.c"],
)
EOF
for i in $(seq 1 48); do
  cat <<C
static const unsigned char table_$i[64] = {$(for j in $(seq 0 63); do printf '%d,' $(( (j * 37 + i * 11) % 251 )); done)};
unsigned long mix_$i(const unsigned char* data, unsigned long size, unsigned long seed) {
  unsigned long h = seed ^ ${i}u;
  for (unsigned long k = 0; k < size; ++k) {
    switch ((data[k] + k) % 6) {
      case 0: h = h * 31 + table_$i[data[k] & 63]; break;
      case 1: h ^= (h << 7) | (h >> 3); break;
      case 2: h += data[k] * ${i}u; break;
      case 3: if (h & 1) h = (h >> 1) ^ 0xedb88320u; else h >>= 1; break;
      case 4: h -= table_$i[(h + k) & 63]; break;
      default: h = ~h + k; break;
    }
  }
  return h;
}
C
done >"$ws/big/big.c"

# --- the README's steps --------------------------------------------------------
step "generate the toolchain: phaseloop toolchain bazel --out tools/phaseloop"
cd "$ws"
"$phaseloop_cli" toolchain bazel --out tools/phaseloop --spool "$spool" --outcome-cache "$outcomes" --cc "$wrapper_cc" \
  >"$logs/generate.log" 2>&1 || { cat "$logs/generate.log" >&2; fail "generator failed"; }
cat "$logs/generate.log"
bazelrc_lines=(
  "build --crosstool_top=//tools/phaseloop:toolchain"
  "build --host_crosstool_top=@bazel_tools//tools/cpp:toolchain"
  "build --sandbox_writable_path=$spool"
  "build --sandbox_writable_path=$outcomes"
)
for line in "${bazelrc_lines[@]}"; do
  grep -qxF "  $line" "$logs/generate.log" ||
    fail "the generator did not print the README's .bazelrc line '$line'"
  echo "$line" >>"$ws/.bazelrc"
done

# The nested Bazel: its own output root, a clean environment, and a short idle
# timeout so that a failed run leaves no server behind.
# machine=b gives a second machine: another output root, server and HOME.
machine=a
nested_bazel() {
  local home="$work/home" root="$work/bazel_root"
  [ "$machine" = a ] || home="$work/home2" root="$work/bazel_root2"
  env -i PATH=/usr/bin:/bin HOME="$home" \
    bazel --output_user_root="$root" --max_idle_secs=60 "$@"
}
busy=()
cleanup() {
  [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2>/dev/null || true
  machine=a nested_bazel shutdown >/dev/null 2>&1 || true
  machine=b nested_bazel shutdown >/dev/null 2>&1 || true
}
trap cleanup EXIT
# Runs bazel with output to logs/NAME.log; on failure shows its tail and fails.
bazel_logged() {
  local name="$1"; shift
  if ! nested_bazel "$@" >"$logs/$name.log" 2>&1; then
    grep -v 'linux-sandbox' "$logs/$name.log" | tail -n 40 >&2
    fail "bazel $* failed (full log $logs/$name.log)"
  fi
}
compile_spawns() { grep -c '"mnemonic": "CppCompile"' "$1" || true; }
# Wrapper processes recorded (decision records of every outcome).
record_count() { stat_of records "$(stats)"; }
# The number after "KEY": in `phaseloop stats --json` (0 when absent).
stat_of() {
  sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p" <<<"$2" | head -n1 |
    grep . || echo 0
}
stats() {
  "$phaseloop_cli" stats --spool "$spool" --json 2>"$logs/stats.err" ||
    fail "phaseloop stats --spool $spool --json failed: $(cat "$logs/stats.err")"
}

step "a. bazel build -c opt //... and bazel test -c opt //..."
bazel_logged build1 build -c opt //... --execution_log_json_file="$work/exec1.json"
compiles="$(compile_spawns "$work/exec1.json")"
[ "$compiles" -ge 6 ] || fail "expected at least 6 compile actions (6 sources), ran $compiles"
bazel_logged test test -c opt //... --test_output=errors
records="$(record_count)"
echo "first build: $compiles compile actions; $records wrapper processes recorded"

step "b. phaseloop stats: an optimized decision for every compile"
json="$(stats)"
echo "$json"
optimized="$(stat_of optimized "$json")"
[ "$optimized" -eq "$compiles" ] ||
  fail "$optimized optimized decisions for $compiles compile actions: $json"

step "c. same policy: a second build (new server) executes zero compile actions"
nested_bazel shutdown >/dev/null 2>&1
bazel_logged build2 build -c opt //... --execution_log_json_file="$work/exec2.json"
again="$(compile_spawns "$work/exec2.json")"
[ "$again" -eq 0 ] || fail "the unchanged build ran $again compile actions ($work/exec2.json)"
[ "$(record_count)" -eq "$records" ] || fail "the unchanged build ran the wrapper"
echo "second build: 0 compile actions, $(grep -c '"mnemonic"' "$work/exec2.json" || true) spawns"

step "d. new policy content: every compile action runs again"
printf '# size first\nfixed:default<Oz>\n' >tools/phaseloop/policy
bazel_logged build3 build -c opt //... --execution_log_json_file="$work/exec3.json"
recompiles="$(compile_spawns "$work/exec3.json")"
[ "$recompiles" -eq "$compiles" ] ||
  fail "after the policy change $recompiles of $compiles compile actions ran"
json="$(stats)"
[ "$(stat_of optimized "$json")" -eq $((2 * compiles)) ] ||
  fail "expected $((2 * compiles)) optimized decisions after the rebuild: $json"
echo "policy changed: $recompiles compile actions ran"

step "e. the binary runs"
output="$("$ws/bazel-bin/app/report")"
expected="gcd=21 primes=9592 adler32=316015564"
[ "$output" = "$expected" ] || fail "report printed '$output', expected '$expected'"
echo "$output"

step "f. the shipped default policy in topk at -Oz"
default_policy="$repo/configs/policies/default.plpolicy"
[ -f "$default_policy" ] || fail "no shipped default policy at $default_policy"
"$phaseloop_cli" toolchain bazel --out tools/phaseloop --spool "$spool" --outcome-cache "$outcomes" --cc "$wrapper_cc" \
  --artifact "$default_policy" >"$logs/generate_default.log" 2>&1 ||
  { cat "$logs/generate_default.log" >&2; fail "generator with --artifact failed"; }
cmp -s tools/phaseloop/policy.plpolicy "$default_policy" ||
  fail "tools/phaseloop/policy.plpolicy is not a copy of $default_policy"
grep -qx 'artifact:policy.plpolicy?mode=topk&k=4&budget=10000' tools/phaseloop/policy ||
  fail "the policy file does not run policy.plpolicy in topk: $(cat tools/phaseloop/policy)"
version="$("$phaseloop_cli" policy show --json "$default_policy" |
  sed -n 's/.*"policy_version"[[:space:]]*:[[:space:]]*"\([0-9a-f]*\)".*/\1/p' | head -n1)"
[ -n "$version" ] || fail "phaseloop policy show printed no policy_version"
bazel_logged build4 build -c opt --copt=-Oz //... --execution_log_json_file="$work/exec4.json"
recompiles="$(compile_spawns "$work/exec4.json")"
[ "$recompiles" -eq "$compiles" ] ||
  fail "with the default policy $recompiles of $compiles compile actions ran"
json="$(stats)"
by_version="$(sed -n "s/.*\"optimized_by_policy\": {[^}]*\"$version\": \([0-9]*\).*/\1/p" <<<"$json")"
[ "${by_version:-0}" -eq "$compiles" ] ||
  fail "expected $compiles optimized decisions by policy $version: $json"
# topk measured every module (an empty outcome cache) and stored its choice.
[ "$(stat_of misses "$json")" -eq "$compiles" ] && [ "$(stat_of hits "$json")" -eq 0 ] ||
  fail "expected $compiles outcome cache misses and no hit: $json"
bazel_logged test4 test -c opt --copt=-Oz //... --test_output=errors
output="$("$ws/bazel-bin/app/report")"
[ "$output" = "$expected" ] || fail "at -Oz with the default, report printed '$output'"
echo "default policy $version: $recompiles compile actions, tests pass, $output"

step "g. a second machine under load: same action keys, same objects"
# "KEY OUTPUT.o" per compile action, sorted.
compile_keys() {
  nested_bazel aquery -c opt --copt=-Oz 'mnemonic("CppCompile", //...)' \
    --output=text 2>"$logs/aquery-$machine.log" | awk '
      /^  ActionKey: / { key = $2 }
      /^  Outputs: / { for (i = 2; i <= NF; i++) if ($i ~ /\.o[],]$/) {
          o = $i; gsub(/[],[]/, "", o); print key, o } }' | sort
}
keys_a="$(compile_keys)"
root_a="$(nested_bazel info execution_root 2>/dev/null)"
nested_bazel shutdown >/dev/null 2>&1
# A fresh checkout has no convenience symlinks (machine b would read a's
# bazel-ws as a source directory).
rm -f "$ws"/bazel-*
# The second machine measures for itself: the outcome cache (named by
# cc_wrapper.sh, so shared by both "machines" here) is emptied first.
"$phaseloop_cli" cache clear --dir "$outcomes" >"$logs/cache_clear.log" 2>&1 ||
  { cat "$logs/cache_clear.log" >&2; fail "phaseloop cache clear --dir $outcomes failed"; }
misses_before="$(stat_of misses "$(stats)")"
for _ in $(seq $((2 * $(nproc)))); do
  (while :; do :; done) &
  busy+=($!)
done
machine=b
bazel_logged build-b build -c opt --copt=-Oz //...
kill "${busy[@]}" 2>/dev/null || true
busy=()
[ $(( $(stat_of misses "$(stats)") - misses_before )) -eq "$compiles" ] ||
  fail "machine b did not measure every module (outcome cache misses): $(stats)"
keys_b="$(compile_keys)"
root_b="$(nested_bazel info execution_root 2>/dev/null)"
nested_bazel shutdown >/dev/null 2>&1
machine=a
[ "$(wc -l <<<"$keys_a")" -ge 7 ] || fail "aquery listed too few compile actions: $keys_a"
[ "$keys_a" = "$keys_b" ] ||
  fail "the two machines' compile action keys differ: $(diff <(echo "$keys_a") <(echo "$keys_b"))"
# aquery lists the compile actions a build may run (both the PIC and the
# non-PIC variant of a binary's sources); compared: those machine a built.
differ=()
compared=0
while read -r key object; do
  [ -f "$root_a/$object" ] || continue
  compared=$((compared + 1))
  cmp -s "$root_a/$object" "$root_b/$object" || differ+=("$object")
done <<<"$keys_a"
[ ${#differ[@]} -eq 0 ] ||
  fail "same action key, different object on the two machines: ${differ[*]}"
[ "$compared" -ge 7 ] || fail "only $compared objects to compare ($root_a)"
echo "two machines (one under $((2 * $(nproc))) busy loops): $compared objects of $(wc -l <<<"$keys_a") compile action keys, same keys, same bytes"

step "h. a trust file: the shipped default runs, a trust file that trusts nothing fails open"
# Back on machine a: b's convenience symlinks would read as source directories.
rm -f "$ws"/bazel-*
"$phaseloop_cli" policy keygen --out "$work/keys" >"$logs/keygen.log" 2>&1 ||
  { cat "$logs/keygen.log" >&2; fail "phaseloop policy keygen failed"; }
"$phaseloop_cli" toolchain bazel --out tools/phaseloop --spool "$spool" --outcome-cache "$outcomes" --cc "$wrapper_cc" \
  --artifact "$default_policy" --trust-file "$work/keys/policy-signing.pub" \
  >"$logs/generate_trust.log" 2>&1 ||
  { cat "$logs/generate_trust.log" >&2; fail "generator with --trust-file failed"; }
cmp -s tools/phaseloop/trust "$work/keys/policy-signing.pub" ||
  fail "tools/phaseloop/trust is not a copy of the trust file"
grep -qxF "export PHASELOOP_TRUST_FILE='tools/phaseloop/trust'" tools/phaseloop/cc_wrapper.sh ||
  fail "cc_wrapper.sh does not name the package's trust file"
optimized_before="$(stat_of optimized "$(stats)")"
bazel_logged build5 build -c opt --copt=-Oz //... --execution_log_json_file="$work/exec5.json"
[ "$(compile_spawns "$work/exec5.json")" -eq "$compiles" ] ||
  fail "with a trust file $(compile_spawns "$work/exec5.json") of $compiles compile actions ran"
json="$(stats)"
[ $(( $(stat_of optimized "$json") - optimized_before )) -eq "$compiles" ] ||
  fail "the shipped default did not run under the trust file: $json"
# The same modules, policy and settings: topk's choices came from the outcome
# cache machine b filled, so this rebuild ran one pipeline per module.
[ "$(stat_of hits "$json")" -eq "$compiles" ] ||
  fail "expected $compiles outcome cache hits in the rebuild under the trust file: $json"
printf 'phaseloop-trust v1\n' >tools/phaseloop/trust
bazel_logged build6 build -c opt --copt=-Oz //... --execution_log_json_file="$work/exec6.json"
[ "$(compile_spawns "$work/exec6.json")" -eq "$compiles" ] ||
  fail "after the trust file changed $(compile_spawns "$work/exec6.json") of $compiles compile actions ran"
json="$(stats)"
[ "$(stat_of policy_untrusted "$json")" -eq "$compiles" ] ||
  fail "expected $compiles compiles counted policy_untrusted: $json"
bazel_logged test6 test -c opt --copt=-Oz //... --test_output=errors
output="$("$ws/bazel-bin/app/report")"
[ "$output" = "$expected" ] || fail "failing open, report printed '$output'"
echo "trust file: the default ran on $compiles files; trusting nothing, $compiles fell back to plain clang (policy_untrusted), tests pass"

trap - EXIT
cleanup
echo "PASS"
