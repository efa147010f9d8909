#!/usr/bin/env bash
# End-to-end: phaseloop-cc as the C compiler of two real projects, Debian's
# zlib (CMake, ctest) and bzip2 (its own Makefile, `make test`), each built
# once with phaseloop-cc (policy `baseline`) and once with plain clang-16.
#
# Checks, in order; every failure names the step and its log:
#   1. both projects build and pass their own self-tests with phaseloop-cc
#      (and with plain clang-16, the reference);
#   2. the wrapper's decision records show optimised compilations
#      (`phaseloop stats --json`: records > 0, optimized > 0);
#   3. same results as plain clang: bzip2 from both builds compresses the
#      inputs to byte-identical .bz2 files, zlib's `example` prints the same
#      and `minigzip` compresses to identical bytes;
#   4. both projects again at -Oz with the machine outliner on
#      (fixed:default<Oz>,codegen<machine-outliner>): self-tests pass,
#      outlined functions present, outputs byte-identical to clang-16's;
#   5. with PHASELOOP_POLICY=fixed:default<O2> and bzip2's own -O2 flags, each
#      bzip2 .c file's object disassembles (llvm-objdump-16) to the same text
#      as plain clang-16's, function by function; differing functions are
#      listed and fail the test;
#   6. the shipped default policy at -Oz (topk, as phaseloop-cc
#      runs it by default): no object of zlib's or bzip2's sources is larger
#      in total (every SHF_ALLOC section: .text, .rodata, .eh_frame, ...)
#      than plain clang-16 -Oz's; zlib's crc32.c's .rodata tables stay put;
#   7. the same sources compiled again with the shipped default while busy
#      loops keep every core loaded give byte-identical objects: topk's
#      budget counts work, not the clock (a clock budget gave 3 of bzip2's
#      5 largest files different objects under load).
#
# Usage: real_projects_test.sh --cc PHASELOOP_CC --phaseloop PHASELOOP_CLI
#
# Sources: the unpacked Debian source packages that tools/fetch_sources.sh
# leaves in ${PHASELOOP_CACHE:-~/.cache/phaseloop}/debian-src (tools/setup.sh
# runs it). The test never uses the network.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

wrapper_cc="" phaseloop_cli=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cc) wrapper_cc="$2"; shift 2 ;;
    --phaseloop) phaseloop_cli="$2"; shift 2 ;;
    --policy) default_policy="$2"; shift 2 ;;
    *) fail "unknown argument '$1' (usage: --cc PATH --phaseloop PATH [--policy FILE])" ;;
  esac
done
[ -n "$wrapper_cc" ] && [ -n "$phaseloop_cli" ] || fail "--cc and --phaseloop are required"
abspath() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
wrapper_cc="$(abspath "$wrapper_cc")"
phaseloop_cli="$(abspath "$phaseloop_cli")"
[ -x "$wrapper_cc" ] || fail "wrapper $wrapper_cc is not executable"
[ -x "$phaseloop_cli" ] || fail "phaseloop CLI $phaseloop_cli is not executable"
for tool in clang-16 llvm-objdump-16 llvm-nm-16 cmake ctest make cmp; do
  command -v "$tool" >/dev/null || fail "$tool not found on PATH (tools/setup.sh installs it)"
done
plain_cc="$(command -v clang-16)"

# Bazel gives tests a HOME of its own (or none): the cache is the real user's.
real_home="$(getent passwd "$(id -u)" | cut -d: -f6)"
src_cache="${PHASELOOP_CACHE:-${real_home}/.cache/phaseloop}/debian-src"
for pkg in bzip2 zlib; do
  [ -f "${src_cache}/${pkg}/.phaseloop-unpacked" ] ||
    fail "Debian source package '${pkg}' is not in ${src_cache}; run tools/fetch_sources.sh" \
      "(tools/setup.sh does) and rerun the test"
done

work="${TEST_TMPDIR:-$(mktemp -d)}/real_projects"
rm -rf "$work"
mkdir -p "$work"
logs="$work/logs"
mkdir -p "$logs"
# Runs "$@" with output to logs/NAME.log; on failure shows its tail and fails.
run_logged() {
  local name="$1"; shift
  if ! "$@" >"$logs/$name.log" 2>&1; then
    tail -n 40 "$logs/$name.log" >&2
    fail "$name failed: $* (full log $logs/$name.log)"
  fi
}

# Build flavours: "phaseloop" uses the wrapper, "clang" plain clang-16.
cc_of() { if [ "$1" = phaseloop ]; then echo "$wrapper_cc"; else echo "$plain_cc"; fi; }

# The wrapper's settings come only from here: no kill switch, no timeout
# override, and no config file (an empty PHASELOOP_CONFIG reads none).
unset PHASELOOP_DISABLE PHASELOOP_TIMEOUT_MS
export PHASELOOP_CONFIG=
export PHASELOOP_POLICY=baseline
spool="$work/spool-builds"
mkdir -p "$spool"
export PHASELOOP_SPOOL="$spool"

# ---------------------------------------------------------------- zlib, CMake
for flavour in phaseloop clang; do
  step "zlib ($flavour): cmake, build, ctest"
  src="$work/zlib-$flavour"
  cp -a "$src_cache/zlib" "$src"
  # Debian's repacked tarball drops win32/, which zlib's CMakeLists.txt names
  # on every platform; an empty resource file satisfies it (unused on Linux).
  mkdir -p "$src/win32" && touch "$src/win32/zlib1.rc"
  run_logged "zlib-$flavour-configure" \
    cmake -S "$src" -B "$src/build" -DCMAKE_C_COMPILER="$(cc_of "$flavour")" \
      -DCMAKE_BUILD_TYPE=Release
  run_logged "zlib-$flavour-build" cmake --build "$src/build" -j 2
  run_logged "zlib-$flavour-ctest" \
    ctest --test-dir "$src/build" --output-on-failure
done

# ------------------------------------------------------ bzip2, its Makefile
for flavour in phaseloop clang; do
  step "bzip2 ($flavour): make, make test"
  src="$work/bzip2-$flavour"
  cp -a "$src_cache/bzip2" "$src"
  run_logged "bzip2-$flavour-build" \
    make -C "$src" -j 2 CC="$(cc_of "$flavour")" libbz2.a bzip2 bzip2recover
  run_logged "bzip2-$flavour-selftest" make -C "$src" CC="$(cc_of "$flavour")" test
done

# ------------------------------------------------------ decision records
# Prints the first number after "KEY": in the JSON file FILE (0 if none).
json_count() {
  local n
  n="$(grep -o "\"$1\"[[:space:]]*:[[:space:]]*[0-9]*" "$2" | head -n1 | grep -o '[0-9]*$' || true)"
  echo "${n:-0}"
}
# Checks the spool DIR holds at least MIN optimized decisions (label: WHAT),
# from `phaseloop stats --spool DIR --json`.
check_spool() {
  local dir="$1" min="$2" what="$3"
  local json="$logs/stats-$(basename "$dir").json" records optimized
  "$phaseloop_cli" stats --spool "$dir" --json >"$json" 2>"$json.stderr" ||
    fail "phaseloop stats --spool $dir --json failed: $(cat "$json.stderr")"
  records="$(json_count records "$json")"
  optimized="$(json_count optimized "$json")"
  echo "decision records for $what: $(tr -d '\n' <"$json")"
  [ "$records" -gt 0 ] || fail "no decision records in $dir for $what"
  [ "$optimized" -ge "$min" ] ||
    fail "$what: $optimized optimized decisions in $dir, expected at least $min: $(cat "$json")"
}
step "decision records of the phaseloop builds"
check_spool "$spool" 1 "the zlib and bzip2 builds"

# ------------------------------------------------------ same results
step "same results as plain clang-16"
inputs="$work/inputs"
mkdir -p "$inputs"
cp "$work"/bzip2-clang/sample{1,2,3}.ref "$inputs/"
cat "$work"/zlib-clang/*.c >"$inputs/zlib-sources.c"
cp "$src_cache"/zlib_*.orig.tar.* "$inputs/zlib.orig.tar"
head -c 300000 /dev/zero >"$inputs/zeros"
# Deterministic noise: not compressible, exercises the fallback paths.
"$plain_cc" -x c -o "$work/noise" - <<'EOF'
#include <stdio.h>
int main(void) {
  unsigned x = 12345;
  for (int i = 0; i < 400000; ++i) { x = x * 1103515245u + 12345u; putchar(x >> 24); }
  return 0;
}
EOF
"$work/noise" >"$inputs/noise"

bzip2_of() { LD_LIBRARY_PATH="$work/bzip2-$1" "$work/bzip2-$1/bzip2" "${@:2}"; }
for input in "$inputs"/*; do
  name="$(basename "$input")"
  for level in 1 9; do
    for flavour in phaseloop clang; do
      bzip2_of "$flavour" -"$level" -c <"$input" >"$work/$name.$level.$flavour.bz2" ||
        fail "bzip2 ($flavour build) -$level failed on $name"
    done
    cmp "$work/$name.$level.phaseloop.bz2" "$work/$name.$level.clang.bz2" ||
      fail "bzip2 -$level on $name: phaseloop-cc and clang-16 builds differ"
    bzip2_of phaseloop -d -c <"$work/$name.$level.clang.bz2" | cmp - "$input" ||
      fail "phaseloop-cc bzip2 does not round-trip $name"
  done
done
echo "bzip2: $(ls "$inputs" | wc -l) inputs x levels 1,9 byte-identical"

for flavour in phaseloop clang; do
  mkdir -p "$work/example-$flavour"
  (cd "$work/example-$flavour" && "$work/zlib-$flavour/build/example" >stdout 2>&1) ||
    fail "zlib example ($flavour build) failed: $(cat "$work/example-$flavour/stdout")"
done
diff "$work/example-phaseloop/stdout" "$work/example-clang/stdout" ||
  fail "zlib example prints differently with phaseloop-cc and clang-16"
minigzip_of() { "$work/zlib-$1/build/minigzip" "${@:2}"; }
for input in "$inputs"/*; do
  name="$(basename "$input")"
  for level in 1 6 9; do
    for flavour in phaseloop clang; do
      minigzip_of "$flavour" -"$level" -c <"$input" >"$work/$name.$level.$flavour.gz" ||
        fail "minigzip ($flavour build) -$level failed on $name"
    done
    cmp "$work/$name.$level.phaseloop.gz" "$work/$name.$level.clang.gz" ||
      fail "minigzip -$level on $name: phaseloop-cc and clang-16 builds differ"
    minigzip_of phaseloop -d -c <"$work/$name.$level.clang.gz" | cmp - "$input" ||
      fail "phaseloop-cc minigzip does not round-trip $name"
  done
done
echo "zlib: example output identical; minigzip $(ls "$inputs" | wc -l) inputs x levels 1,6,9 byte-identical"

# ------------------------------------------------------ size builds, machine outliner
# Both projects at -Oz through phaseloop-cc with a pipeline that turns LLVM's
# machine outliner on (codegen<machine-outliner>, which size policies may
# choose): their self-tests pass, the objects really hold outlined
# functions, and they compress every input to the bytes the plain clang-16
# builds give.
step "zlib and bzip2 at -Oz with codegen<machine-outliner>"
size_spool="$work/spool-size"
mkdir -p "$size_spool"
size_env=(env PHASELOOP_POLICY='fixed:default<Oz>,codegen<machine-outliner>'
          PHASELOOP_SPOOL="$size_spool")
src="$work/zlib-size"
cp -a "$src_cache/zlib" "$src"
mkdir -p "$src/win32" && touch "$src/win32/zlib1.rc"
run_logged zlib-size-configure "${size_env[@]}" \
  cmake -S "$src" -B "$src/build" -DCMAKE_C_COMPILER="$wrapper_cc" \
    -DCMAKE_BUILD_TYPE=MinSizeRel -DCMAKE_C_FLAGS_MINSIZEREL="-Oz -DNDEBUG"
run_logged zlib-size-build "${size_env[@]}" cmake --build "$src/build" -j 2
run_logged zlib-size-ctest ctest --test-dir "$src/build" --output-on-failure
src="$work/bzip2-size"
cp -a "$src_cache/bzip2" "$src"
run_logged bzip2-size-build "${size_env[@]}" make -C "$src" -j 2 CC="$wrapper_cc" \
  CFLAGS="-Wall -Winline -Oz -g -D_FILE_OFFSET_BITS=64" libbz2.a bzip2 bzip2recover
run_logged bzip2-size-selftest make -C "$src" CC="$wrapper_cc" test
outlined=0
for object in "$work"/bzip2-size/*.o $(find "$work/zlib-size/build" -name '*.o'); do
  if llvm-nm-16 "$object" 2>/dev/null | grep -q OUTLINED_FUNCTION; then
    outlined=$((outlined + 1))
  fi
done
[ "$outlined" -gt 0 ] ||
  fail "no object of the -Oz machine-outliner builds holds an OUTLINED_FUNCTION"
check_spool "$size_spool" 10 "the -Oz machine-outliner builds"
for input in "$inputs"/*; do
  name="$(basename "$input")"
  bzip2_of size -9 -c <"$input" | cmp - "$work/$name.9.clang.bz2" ||
    fail "bzip2 -9 on $name: the -Oz machine-outliner build and clang-16 differ"
  minigzip_of size -9 -c <"$input" | cmp - "$work/$name.9.clang.gz" ||
    fail "minigzip -9 on $name: the -Oz machine-outliner build and clang-16 differ"
done
echo "size builds: self-tests pass, $outlined objects with outlined functions," \
  "bzip2 and minigzip outputs byte-identical to clang-16's"

# ------------------------------------------------------ disassembly, fixed:default<O2>
step "bzip2 objects: fixed:default<O2> vs clang-16 -O2, function by function"
fixed_spool="$work/spool-fixed"
mkdir -p "$fixed_spool"
bz="$work/bzip2-clang"
# bzip2's own flags (its Makefile's CFLAGS).
bz_cflags=(-Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64)
bz_sources=(blocksort huffman crctable randtable compress decompress bzlib bzip2 bzip2recover)

# Writes one file per function of OBJECT's disassembly into DIR: the text
# after the symbol's header line, with addresses dropped (a function that
# moves because an earlier one changed size is still equal).
split_functions() {
  local object="$1" dir="$2"
  mkdir -p "$dir"
  llvm-objdump-16 -d --no-show-raw-insn "$object" >"$dir.dis" ||
    fail "llvm-objdump-16 -d $object failed"
  awk -v dir="$dir" '
    /^[0-9a-f]+ <.*>:$/ {
      if (out) close(out)
      name = $2; gsub(/[<>:]/, "", name)
      out = dir "/" name; next
    }
    out && NF {
      line = $0
      sub(/^[[:space:]]*[0-9a-f]+:[[:space:]]*/, "", line)
      gsub(/0x[0-9a-f]+ </, "<", line)
      print line > out
    }' "$dir.dis"
}

differing=() compared=0
for f in "${bz_sources[@]}"; do
  for flavour in phaseloop clang; do
    out="$work/objects/$flavour"
    mkdir -p "$out"
    if [ "$flavour" = phaseloop ]; then
      run_logged "fixed-$f-phaseloop" env PHASELOOP_POLICY='fixed:default<O2>' \
        PHASELOOP_SPOOL="$fixed_spool" \
        "$wrapper_cc" "${bz_cflags[@]}" -c "$bz/$f.c" -o "$out/$f.o"
    else
      run_logged "fixed-$f-clang" "$plain_cc" "${bz_cflags[@]}" -c "$bz/$f.c" -o "$out/$f.o"
    fi
    split_functions "$out/$f.o" "$out/$f.functions"
  done
  a="$work/objects/phaseloop/$f.functions" b="$work/objects/clang/$f.functions"
  only_a="$(comm -23 <(ls "$a") <(ls "$b") | tr '\n' ' ')"
  only_b="$(comm -13 <(ls "$a") <(ls "$b") | tr '\n' ' ')"
  [ -z "$only_a" ] || differing+=("$f.c: only with phaseloop-cc: $only_a")
  [ -z "$only_b" ] || differing+=("$f.c: only with clang-16: $only_b")
  for fa in "$a"/*; do
    fn="$(basename "$fa")"
    [ -f "$b/$fn" ] || continue
    compared=$((compared + 1))
    cmp -s "$a/$fn" "$b/$fn" || differing+=("$f.c: $fn")
  done
done
check_spool "$fixed_spool" "${#bz_sources[@]}" "the fixed:default<O2> compiles"
if [ ${#differing[@]} -gt 0 ]; then
  printf '  differs: %s\n' "${differing[@]}" >&2
  fail "${#differing[@]} of $compared bzip2 functions disassemble differently with" \
    "phaseloop-cc fixed:default<O2> and clang-16 -O2 (objects and .dis in $work/objects)"
fi
echo "bzip2: $compared functions in ${#bz_sources[@]} objects disassemble identically"

# ------------------------------------- the shipped default: whole objects at -Oz
step "the shipped default at -Oz: no object larger in total than clang-16 -Oz's"
[ -n "${default_policy:-}" ] || fail "--policy (the shipped default) not given"
default_spec="artifact:$(abspath "$default_policy")?mode=topk&k=4&budget=10000"
alloc_dir="$work/alloc"
mkdir -p "$alloc_dir" "$work/spool-alloc"
# Bytes of the object's allocated (SHF_ALLOC) sections.
alloc_bytes() {
  readelf -S -W "$1" | awk '
    function hex(s,   n, i) {
      n = 0; s = tolower(s)
      for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return n
    }
    /^ *\[ *[0-9]+\]/ {
      sub(/^ *\[ *[0-9]+\] */, "")
      if ($7 ~ /A/) total += hex($5)
    }
    END { print total + 0 }'
}
larger=()
checked=0
for src in "$src_cache"/zlib/{adler32,compress,crc32,deflate,infback,inffast,inflate,inftrees,trees,uncompr,zutil}.c \
           "$src_cache"/bzip2/{blocksort,bzlib,compress,crctable,decompress,huffman,randtable,bzip2}.c; do
  name="$(basename "$(dirname "$src")")_$(basename "$src" .c)"
  run_logged "alloc-$name-clang" "$plain_cc" -Oz -w -c "$src" -o "$alloc_dir/$name.clang.o"
  run_logged "alloc-$name-phaseloop" env PHASELOOP_SPOOL="$work/spool-alloc" \
    "$wrapper_cc" -Oz -w -c "$src" -o "$alloc_dir/$name.phaseloop.o" \
    --phaseloop-policy="$default_spec"
  ours="$(alloc_bytes "$alloc_dir/$name.phaseloop.o")"
  theirs="$(alloc_bytes "$alloc_dir/$name.clang.o")"
  [ "$ours" -gt 0 ] && [ "$theirs" -gt 0 ] || fail "$name: no allocated sections measured"
  [ "$ours" -le "$theirs" ] || larger+=("$name: $ours bytes vs clang-16 -Oz $theirs")
  checked=$((checked + 1))
done
if [ ${#larger[@]} -gt 0 ]; then
  printf '  larger: %s\n' "${larger[@]}" >&2
  fail "${#larger[@]} of $checked objects are larger in total than clang-16 -Oz's" \
    "with the shipped default (objects in $alloc_dir)"
fi
echo "shipped default at -Oz: $checked objects, none larger in total than clang-16 -Oz's"

# ------------------------------------------ the same objects under heavy load
step "the shipped default under load: byte-identical objects"
busy=()
stop_busy() { [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2>/dev/null || true; }
trap stop_busy EXIT
for _ in $(seq $((2 * $(nproc)))); do
  (while :; do :; done) &
  busy+=($!)
done
changed=()
loaded=0
for src in "$src_cache"/zlib/{crc32,deflate,inflate,trees}.c \
           "$src_cache"/bzip2/{blocksort,bzlib,compress,decompress,bzip2}.c; do
  name="$(basename "$(dirname "$src")")_$(basename "$src" .c)"
  # The per-TU timeout is the compile path's one clock, a hang guard that
  # falls back to plain clang (decision optimizer_timed_out). This step is
  # about topk's budget, so the guard gets room: under ASan, with these
  # busy loops, bzip2's decompress.c took over the default 120 s. The
  # outcome cache (on by default) is off: topk measures again, under load.
  run_logged "load-$name-phaseloop" env PHASELOOP_SPOOL="$work/spool-alloc" \
    PHASELOOP_TIMEOUT_MS=1800000 PHASELOOP_OUTCOME_CACHE=off \
    "$wrapper_cc" -Oz -w -c "$src" -o "$alloc_dir/$name.loaded.o" \
    --phaseloop-policy="$default_spec"
  cmp -s "$alloc_dir/$name.phaseloop.o" "$alloc_dir/$name.loaded.o" ||
    changed+=("$name")
  loaded=$((loaded + 1))
done
stop_busy
busy=()
[ ${#changed[@]} -eq 0 ] ||
  fail "under load ${#changed[@]} of $loaded objects differ from the idle build:" \
    "${changed[*]} (objects in $alloc_dir)"
echo "under load ($((2 * $(nproc))) busy loops): $loaded objects byte-identical"

echo "PASS: real projects (zlib via CMake, bzip2 via make) with phaseloop-cc"
