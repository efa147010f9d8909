#include "tests/argv_fuzz/fuzz_case.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace phaseloop::argv_fuzz {

namespace fs = std::filesystem;

namespace {

// ---- randomness ----------------------------------------------------------

// SplitMix64: fully specified here, so a seed means the same cases with any
// standard library (std::uniform_int_distribution is not portable).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : Next() % n; }
  bool Percent(int p) { return static_cast<int>(Below(100)) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

 private:
  uint64_t state_;
};

using Group = std::vector<std::string>;  // arguments that stay together

const char kBrokenC[] =
    "/* a warning, then a syntax error */\n"
    "static int helper(int x) { int unused; return x; }\n"
    "int main(void) { return helper(0) }\n";
const char kBrokenCxx[] =
    "// a warning, then a syntax error\n"
    "static int helper(int x) { int unused; return x; }\n"
    "int main() { return helper(0) }\n";

void Add(std::vector<Group>* groups, Group g) {
  groups->push_back(std::move(g));
}

}  // namespace

Case Generate(uint64_t seed, int index, const std::vector<std::string>& c_srcs,
              const std::vector<std::string>& cc_srcs) {
  // Each case from (seed, index) alone.
  Rng rng(seed * 0x100000001b3ULL ^
          (static_cast<uint64_t>(index) + 1) * 0x9e3779b97f4a7c15ULL);
  rng.Next();
  Case c;
  c.index = index;
  c.cxx = rng.Percent(30);
  const std::vector<std::string>& srcs = c.cxx ? cc_srcs : c_srcs;
  const std::string ext = c.cxx ? ".cc" : ".c";
  std::vector<Group> groups;
  std::vector<size_t> source_groups;  // indexes into groups
  auto add_source = [&](const std::string& name, bool copy) {
    source_groups.push_back(groups.size());
    groups.push_back({name});
    if (copy &&
        std::find(c.inputs.begin(), c.inputs.end(), name) == c.inputs.end()) {
      c.inputs.push_back(name);
    }
  };

  // Sources: one fixture mostly; sometimes several (even the same twice),
  // one of the other language, a broken one, a missing one, stdin.
  const int nsources = rng.Percent(82) ? 1 : rng.Percent(70) ? 2 : 3;
  for (int i = 0; i < nsources; ++i) add_source(rng.Pick(srcs), true);
  if (rng.Percent(4)) add_source(rng.Pick(c.cxx ? c_srcs : cc_srcs), true);
  if (rng.Percent(6)) {
    c.files["broken" + ext] = c.cxx ? kBrokenCxx : kBrokenC;
    add_source("broken" + ext, false);
  }
  if (rng.Percent(4)) add_source("missing" + ext, false);
  bool use_stdin = false;
  if (rng.Percent(3)) {
    use_stdin = true;
    c.stdin_fixture = rng.Pick(srcs);
    c.inputs.push_back(c.stdin_fixture);
  }

  // What the driver does.
  enum Mode { kCompile, kAssemble, kPreprocess, kSyntax, kLink, kDeps, kBc };
  const int m = static_cast<int>(rng.Below(100));
  const Mode mode = m < 45   ? kCompile
                    : m < 56 ? kAssemble
                    : m < 66 ? kPreprocess
                    : m < 75 ? kSyntax
                    : m < 85 ? kLink
                    : m < 90 ? kDeps
                             : kBc;
  switch (mode) {
    case kCompile:
      Add(&groups, {"-c"});
      break;
    case kAssemble:
      Add(&groups, {"-S"});
      if (rng.Percent(20)) Add(&groups, {"-c"});  // both: clang's order rule
      break;
    case kPreprocess:
      Add(&groups, {"-E"});
      if (rng.Percent(15)) Add(&groups, {"-P"});
      if (rng.Percent(10)) Add(&groups, {"-dM"});
      break;
    case kSyntax:
      Add(&groups, {"-fsyntax-only"});
      if (rng.Percent(20)) Add(&groups, {"-c"});
      break;
    case kLink:
      break;
    case kDeps:
      Add(&groups, {rng.Percent(50) ? "-M" : "-MM"});
      break;
    case kBc:
      Add(&groups, {"-emit-llvm"});
      Add(&groups, {rng.Percent(70) ? "-c" : "-S"});
      break;
  }
  if (rng.Percent(2)) Add(&groups, {"-###"});
  if (rng.Percent(2)) Add(&groups, {"-v"});

  // Output.
  const int o = static_cast<int>(rng.Below(100));
  if (o < 40) {
    std::string name = mode == kCompile      ? "out.o"
                       : mode == kAssemble   ? "out.s"
                       : mode == kPreprocess ? "out.i"
                       : mode == kLink       ? "prog"
                       : mode == kDeps       ? "out.d"
                       : mode == kBc         ? "out.bc"
                                             : "out.o";
    if (rng.Percent(10)) name = "weird.name";
    if (rng.Percent(15)) {
      Add(&groups, {"-o" + name});
    } else {
      Add(&groups, {"-o", name});
    }
  } else if (o < 50) {
    Add(&groups, {"-o", "-"});
  } else if (o < 53) {
    Add(&groups, {"-o", "nodir/out.o"});
  } else if (o < 56) {
    c.files["sub/.keep"] = "";
    Add(&groups, {"-o", "sub/out.o"});
  }

  // Optimisation levels (sometimes two: the last wins).
  static const std::vector<std::string> kOpt = {
      "-O0", "-O1", "-O2", "-O3", "-Os", "-Oz", "-O", "-Og", "-Ofast", "-O4"};
  if (rng.Percent(80)) Add(&groups, {rng.Pick(kOpt)});
  if (rng.Percent(12)) Add(&groups, {rng.Pick(kOpt)});

  static const std::vector<std::string> kDebug = {"-g",
                                                  "-g0",
                                                  "-g1",
                                                  "-g2",
                                                  "-g3",
                                                  "-gline-tables-only",
                                                  "-gdwarf-4",
                                                  "-gdwarf-5",
                                                  "-ggdb",
                                                  "-gsplit-dwarf",
                                                  "-gcolumn-info",
                                                  "-gno-column-info",
                                                  "-gz",
                                                  "-gembed-source"};
  if (rng.Percent(35)) Add(&groups, {rng.Pick(kDebug)});
  if (rng.Percent(8)) Add(&groups, {rng.Pick(kDebug)});

  // Dependency files.
  if (rng.Percent(30)) {
    Add(&groups, {rng.Percent(50) ? "-MD" : "-MMD"});
    if (rng.Percent(50)) Add(&groups, {"-MF", "deps.d"});
    if (rng.Percent(30)) Add(&groups, {"-MT", "target.o"});
    if (rng.Percent(15)) Add(&groups, {"-MQ", "$(objdir)/q.o"});
    if (rng.Percent(20)) Add(&groups, {"-MP"});
  } else if (rng.Percent(6)) {
    // Dependency-file flags without -MD/-MMD.
    Add(&groups,
        rng.Percent(50) ? Group{"-MF", "deps.d"} : Group{"-MT", "target.o"});
  }

  if (rng.Percent(8)) {
    static const std::vector<std::string> kTemps = {
        "-save-temps", "-save-temps=obj", "-save-temps=cwd"};
    Add(&groups, {rng.Pick(kTemps)});
  }
  if (rng.Percent(8)) {
    static const std::vector<std::string> kLto = {"-flto", "-flto=thin",
                                                  "-flto=full"};
    Add(&groups, {rng.Pick(kLto)});
  }

  // -x before the first source (sometimes the other language).
  bool x_given = false;
  std::string x_language;
  if (rng.Percent(8) || use_stdin) {
    x_given = true;
    x_language = (rng.Percent(80) ? c.cxx : !c.cxx) ? "c++" : "c";
  }

  if (rng.Percent(12)) {
    static const std::vector<Group> kXclang = {
        {"-Xclang", "-disable-O0-optnone"},
        {"-Xclang", "-disable-llvm-verifier"},
        {"-Xclang", "-disable-llvm-passes"},
        {"-Xclang", "-fno-pch-timestamp"},
        {"-Xclang", "-mrelax-all"},
        {"-mllvm", "-inline-threshold=50"},
        {"-mllvm", "-unroll-threshold=10"},
        {"-mllvm", "-x86-asm-syntax=intel"},
        {"-mllvm", "-disable-lsr"},
        {"-mllvm", "-enable-misched=false"},
        {"-mllvm", "-align-all-functions=5"},
        {"-mllvm", "-no-such-llvm-option"},
    };
    Add(&groups, rng.Pick(kXclang));
    if (rng.Percent(25)) Add(&groups, rng.Pick(kXclang));
  }
  if (rng.Percent(7)) {
    static const std::vector<std::string> kSan = {
        "-fsanitize=address", "-fsanitize=undefined",
        "-fsanitize=address,undefined", "-fsanitize=no-such"};
    Add(&groups, {rng.Pick(kSan)});
    if (rng.Percent(25)) Add(&groups, {"-fno-sanitize-recover=all"});
  }
  if (rng.Percent(6)) {
    static const std::vector<Group> kProf = {
        {"-fprofile-instr-generate"},
        {"-fprofile-instr-generate", "-fcoverage-mapping"},
        {"--coverage"},
        {"-ftest-coverage"}};
    for (const auto& a : rng.Pick(kProf)) Add(&groups, {a});
  }

  // Warnings.
  if (rng.Percent(40)) {
    static const std::vector<std::string> kWarn = {
        "-Wall",
        "-Wextra",
        "-Wshadow",
        "-Wconversion",
        "-Wsign-conversion",
        "-Weverything",
        "-pedantic",
        "-Wpedantic",
        "-Wno-unused-parameter",
        "-Wno-unused-command-line-argument",
        "-Werror",
        "-Werror=conversion",
        "-Werror=unused-command-line-argument",
        "-Werror=unused-variable",
        "-Wno-error",
        "-w",
        "-Wformat=2",
        "-Wno-such-warning",
        "-Wunused-variable"};
    const int n = 1 + static_cast<int>(rng.Below(3));
    for (int i = 0; i < n; ++i) Add(&groups, {rng.Pick(kWarn)});
  }
  if (rng.Percent(8)) Add(&groups, {"-Werror"});

  // Linker flags (unused with -c/-S/-E: clang warns).
  if (rng.Percent(15)) {
    static const std::vector<Group> kLink = {
        {"-lm"},           {"-L/usr/lib"},     {"-Wl,--as-needed"},
        {"-Wl,--foo"},     {"-Wl,-O1"},        {"-pthread"},
        {"-rdynamic"},     {"-L", "/usr/lib"}, {"-Xlinker", "--no-undefined"},
        {"-static-libgcc"}};
    const int n = 1 + static_cast<int>(rng.Below(2));
    for (int i = 0; i < n; ++i) Add(&groups, rng.Pick(kLink));
  }
  if (rng.Percent(5)) {
    static const std::vector<std::string> kUnknown = {
        "-fno-such-flag", "--no-such-option", "-mno-such-thing", "-Xfoo",
        "-fsuch-flag=1"};
    Add(&groups, {rng.Pick(kUnknown)});
  }

  if (rng.Percent(35)) {
    static const std::vector<Group> kMisc = {{"-DNDEBUG"},
                                             {"-DFOO=1"},
                                             {"-D", "BAR"},
                                             {"-UFOO"},
                                             {"-I."},
                                             {"-I", "inc"},
                                             {"-fPIC"},
                                             {"-fno-pic"},
                                             {"-fpie"},
                                             {"-ffunction-sections"},
                                             {"-fdata-sections"},
                                             {"-march=haswell"},
                                             {"-mtune=generic"},
                                             {"-fno-omit-frame-pointer"},
                                             {"-fno-strict-aliasing"},
                                             {"-funroll-loops"},
                                             {"-ffast-math"},
                                             {"-fvisibility=hidden"},
                                             {"-fstack-protector-strong"},
                                             {"-Qunused-arguments"},
                                             {"-fno-builtin"},
                                             {"-fcolor-diagnostics"},
                                             {"-fno-color-diagnostics"},
                                             {"-fno-exceptions"},
                                             {"-fno-rtti"},
                                             {"-fno-inline"},
                                             {"-fdebug-prefix-map=/tmp=/x"},
                                             {"-fno-ident"},
                                             {"-pipe"},
                                             {"-include", "stdio.h"},
                                             {"-std=c11"},
                                             {"-std=gnu17"},
                                             {"-std=c++17"},
                                             {"-std=c++20"}};
    const int n = 1 + static_cast<int>(rng.Below(3));
    for (int i = 0; i < n; ++i) Add(&groups, rng.Pick(kMisc));
  }

  // Shuffle (Fisher-Yates), then put -x right before the first source.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[rng.Below(i)]);
  }
  std::vector<std::string> flat;
  bool x_placed = false;
  for (size_t gi : order) {
    const bool is_source = std::find(source_groups.begin(), source_groups.end(),
                                     gi) != source_groups.end();
    if (is_source && x_given && !x_placed) {
      flat.insert(flat.end(), {"-x", x_language});
      x_placed = true;
    }
    flat.insert(flat.end(), groups[gi].begin(), groups[gi].end());
  }
  if (use_stdin) {
    if (!x_placed) flat.insert(flat.end(), {"-x", x_language});
    flat.push_back("-");
  }

  // Response files: a run of the arguments moved into @args.rsp.
  if (rng.Percent(10) && !flat.empty()) {
    const size_t begin = rng.Below(flat.size());
    const size_t end = begin + 1 + rng.Below(flat.size() - begin);
    std::string contents;
    const bool lines = rng.Percent(50);
    for (size_t i = begin; i < end; ++i) {
      contents += flat[i];
      contents += lines ? "\n" : " ";
    }
    c.files["args.rsp"] = contents;
    flat.erase(flat.begin() + begin, flat.begin() + end);
    flat.insert(flat.begin() + begin, "@args.rsp");
  }
  if (rng.Percent(2)) flat.push_back("@missing.rsp");
  c.args = std::move(flat);
  return c;
}

}  // namespace phaseloop::argv_fuzz
