// Differential argv fuzzer: phaseloop-cc / phaseloop-c++ against plain
// clang-16 / clang++-16 on random real command lines over the fixture
// programs (compiler_driver/fixtures).
//
//   tools/bazel.sh run //tests/argv_fuzz:argv_fuzz -- --seed 1 --cases 1000
//
// Each case is one command line (optimisation levels, -g variants,
// dependency files, -save-temps, -flto, -S/-E/-c/-fsyntax-only, -x,
// -Xclang/-mllvm pairs, sanitizers, profiling, warnings and -Werror, linker
// flags, unknown flags, response files, several sources, `-o -`, a source
// with a syntax error, a missing file, stdin). It runs with clang and then
// with the wrapper (plus --phaseloop-policy=baseline), each time in a fresh
// scratch directory holding copies of the inputs, at the same path (so
// DW_AT_comp_dir and every printed path agree), with relative paths, and
// with the wrapper's environment (a scratch PHASELOOP_SPOOL, an empty
// PHASELOOP_CONFIG, no other PHASELOOP_*). It compares the exit status,
// stdout, stderr (the scratch path normalised), the set of files and
// directories left in the scratch directory, and the bytes of every file.
//
// Every disagreement is printed with the full argv and a summary of what
// differs, then "N cases, D disagreements"; the exit status is 0 iff D == 0.
// With --allowlist FILE, disagreements an entry of FILE covers are printed
// as known (naming the entry) and only the others fail the run.
//
// Deterministic for a seed: case K is generated from (seed, K) alone, so
// `--seed S --only K` replays one case of a long run.

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

extern char** environ;

namespace phaseloop::argv_fuzz {
namespace {

namespace fs = std::filesystem;

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

// ---- cases ---------------------------------------------------------------

struct Case {
  int index = 0;
  bool cxx = false;                 // clang++-16 / phaseloop-c++
  std::vector<std::string> args;    // after argv[0], as given (may hold @rsp)
  std::vector<std::string> inputs;  // fixture file names copied in
  std::map<std::string, std::string> files;  // more files written in
  std::string stdin_fixture;                 // "" for /dev/null
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

// ---- running -------------------------------------------------------------

struct Tree {
  std::map<std::string, std::string> files;  // relative path -> bytes
  std::set<std::string> dirs;                // relative paths
};

struct RunResult {
  int status = 0;
  std::string out, err;
  Tree tree;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WriteFile(const std::string& path, const std::string& contents) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out << contents;
  return static_cast<bool>(out);
}

// argv[0] looked up on PATH (before fork: no allocation in the child).
std::string ResolveProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

Tree Snapshot(const std::string& dir) {
  Tree tree;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), dir).string();
    if (it->is_symlink()) {
      tree.files[rel] = "symlink -> " + fs::read_symlink(it->path()).string();
    } else if (it->is_directory()) {
      tree.dirs.insert(rel);
    } else {
      tree.files[rel] = ReadFile(it->path().string());
    }
  }
  return tree;
}

void Replace(std::string* s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t pos = 0; (pos = s->find(from, pos)) != std::string::npos;) {
    s->replace(pos, from.size(), to);
    pos += to.size();
  }
}

// Text with the scratch directory and the driver's temporary files' random
// names (TMPDIR/<stem>-<6 hex>.<ext>) made the same on both sides.
std::string Normalise(std::string text, const std::string& scratch,
                      const std::string& tmp) {
  static const std::regex kTempName("\\$TMPDIR/([^/\\s:'\"]*)-[0-9a-f]{6}\\.");
  Replace(&text, tmp, "$TMPDIR");
  Replace(&text, scratch, "$SCRATCH");
  return std::regex_replace(text, kTempName, "$$TMPDIR/$1-XXXXXX.");
}

// Runs `argv` in `dir` (already populated); stdout/stderr go to files beside
// `dir`, never into it.
RunResult Run(const std::vector<std::string>& argv,
              const std::vector<std::string>& env, const std::string& dir,
              const std::string& stdin_path, const std::string& io_prefix,
              int timeout_s) {
  const std::string program = ResolveProgram(argv[0]);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  const std::string out_path = io_prefix + ".stdout";
  const std::string err_path = io_prefix + ".stderr";
  RunResult r;
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int in = open(stdin_path.c_str(), O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    close(in);
    close(out);
    close(err);
    setpgid(0, 0);
    alarm(timeout_s);
    execve(program.c_str(), cargv.data(), cenv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  kill(-pid, SIGKILL);  // anything the run left behind in its group
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  r.tree = Snapshot(dir);
  return r;
}

// ---- comparing -----------------------------------------------------------

// "What differs" kinds, as the allowlist names them.
// "stderr-order": the same stderr lines in another order.
constexpr const char* kKinds[] = {"exit",         "stdout", "stderr",
                                  "stderr-order", "files",  "bytes"};

struct Difference {
  std::set<std::string> kinds;
  std::string clang_stderr;  // normalised, for the allowlist's stderr-has=
  std::vector<std::string> details;
};

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::stringstream in(s);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The differing middle of two texts (common leading and trailing lines
// dropped), a few lines of each side.
std::string TextDiff(const std::string& a, const std::string& b) {
  const std::vector<std::string> la = Lines(a), lb = Lines(b);
  size_t pre = 0;
  while (pre < la.size() && pre < lb.size() && la[pre] == lb[pre]) ++pre;
  size_t suf = 0;
  while (suf < la.size() - pre && suf < lb.size() - pre &&
         la[la.size() - 1 - suf] == lb[lb.size() - 1 - suf]) {
    ++suf;
  }
  std::ostringstream out;
  auto side = [&](const char* tag, const std::vector<std::string>& l) {
    const size_t n = l.size() - pre - suf;
    for (size_t i = 0; i < n && i < 8; ++i) {
      std::string line = l[pre + i];
      if (line.size() > 200) line = line.substr(0, 200) + "...";
      out << "      " << tag << " " << line << "\n";
    }
    if (n > 8) out << "      " << tag << " ... (" << n - 8 << " more lines)\n";
    if (n == 0) out << "      " << tag << " (nothing)\n";
  };
  out << "      at line " << pre + 1 << ":\n";
  side("clang  |", la);
  side("wrapper|", lb);
  return out.str();
}

std::string BytesDiff(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::ostringstream out;
  out << a.size() << " vs " << b.size() << " bytes, first difference at "
      << "offset " << i;
  return out.str();
}

bool Printable(const std::string& s) {
  for (unsigned char ch : s) {
    if (ch == 0 || (ch < 32 && ch != '\n' && ch != '\t' && ch != '\r')) {
      return false;
    }
  }
  return true;
}

Difference Compare(const RunResult& clang, const RunResult& wrapper,
                   const std::string& scratch, const std::string& tmp) {
  Difference d;
  if (clang.status != wrapper.status) {
    d.kinds.insert("exit");
    d.details.push_back("exit status: clang " + std::to_string(clang.status) +
                        ", wrapper " + std::to_string(wrapper.status));
  }
  if (clang.out != wrapper.out) {
    d.kinds.insert("stdout");
    d.details.push_back("stdout: " + BytesDiff(clang.out, wrapper.out) +
                        (Printable(clang.out) && Printable(wrapper.out)
                             ? "\n" + TextDiff(clang.out, wrapper.out)
                             : ""));
  }
  const std::string err_a = Normalise(clang.err, scratch, tmp);
  const std::string err_b = Normalise(wrapper.err, scratch, tmp);
  d.clang_stderr = err_a;
  if (err_a != err_b) {
    std::vector<std::string> sorted_a = Lines(err_a), sorted_b = Lines(err_b);
    std::sort(sorted_a.begin(), sorted_a.end());
    std::sort(sorted_b.begin(), sorted_b.end());
    d.kinds.insert(sorted_a == sorted_b ? "stderr-order" : "stderr");
    d.details.push_back("stderr:\n" + TextDiff(err_a, err_b));
  }
  std::set<std::string> only_a, only_b;
  for (const auto& dir : clang.tree.dirs) {
    if (!wrapper.tree.dirs.count(dir)) only_a.insert(dir + "/");
  }
  for (const auto& dir : wrapper.tree.dirs) {
    if (!clang.tree.dirs.count(dir)) only_b.insert(dir + "/");
  }
  for (const auto& [name, bytes] : clang.tree.files) {
    auto it = wrapper.tree.files.find(name);
    if (it == wrapper.tree.files.end()) {
      only_a.insert(name);
    } else if (it->second != bytes) {
      d.kinds.insert("bytes");
      d.details.push_back("file " + name +
                          " differs: " + BytesDiff(bytes, it->second));
    }
  }
  for (const auto& [name, bytes] : wrapper.tree.files) {
    if (!clang.tree.files.count(name)) only_b.insert(name);
  }
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : " ") + x;
    return out;
  };
  if (!only_a.empty() || !only_b.empty()) {
    d.kinds.insert("files");
    d.details.push_back("files only clang made: [" + join(only_a) +
                        "], only the wrapper made: [" + join(only_b) + "]");
  }
  return d;
}

// ---- the allowlist of known disagreements ---------------------------------

// One line per entry:
//   NAME [args=TOK[,TOK...]] differs=KIND[,KIND...] [stderr-has=TEXT]
// A disagreement is covered when every TOK matches some argument of its
// argv (response files expanded; a TOK ending in '*' matches by prefix),
// every kind it differs in is one of the KINDs, and clang's stderr
// (normalised) contains TEXT.
struct KnownEntry {
  std::string name;
  std::vector<std::string> args;
  std::string stderr_has;
  std::set<std::string> kinds;
  int line = 0;
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

bool LoadAllowlist(const std::string& path, std::vector<KnownEntry>* entries,
                   std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::stringstream words(line);
    std::string word;
    KnownEntry e;
    e.line = n;
    while (words >> word) {
      if (e.name.empty()) {
        e.name = word;
      } else if (word.rfind("args=", 0) == 0) {
        e.args = Split(word.substr(5), ',');
      } else if (word.rfind("stderr-has=", 0) == 0) {
        e.stderr_has = word.substr(11);
      } else if (word.rfind("differs=", 0) == 0) {
        for (const auto& k : Split(word.substr(8), ',')) {
          if (std::find(std::begin(kKinds), std::end(kKinds), k) ==
              std::end(kKinds)) {
            *error = path + ":" + std::to_string(n) + ": unknown kind " + k;
            return false;
          }
          e.kinds.insert(k);
        }
      } else {
        *error = path + ":" + std::to_string(n) + ": cannot read '" + word +
                 "' (want NAME args=... differs=...)";
        return false;
      }
    }
    if (e.name.empty()) continue;
    if (e.kinds.empty()) {
      *error =
          path + ":" + std::to_string(n) + ": " + e.name + " lists no differs=";
      return false;
    }
    entries->push_back(std::move(e));
  }
  return true;
}

std::vector<std::string> ExpandedArgs(const Case& c) {
  std::vector<std::string> out;
  for (const auto& a : c.args) {
    auto it =
        a.size() > 1 && a[0] == '@' ? c.files.find(a.substr(1)) : c.files.end();
    if (it == c.files.end()) {
      out.push_back(a);
      continue;
    }
    std::stringstream words(it->second);
    std::string w;
    while (words >> w) out.push_back(w);
  }
  return out;
}

const KnownEntry* Covering(const std::vector<KnownEntry>& entries,
                           const Case& c, const Difference& d) {
  const std::vector<std::string> args = ExpandedArgs(c);
  for (const auto& e : entries) {
    bool ok = std::includes(e.kinds.begin(), e.kinds.end(), d.kinds.begin(),
                            d.kinds.end()) &&
              d.clang_stderr.find(e.stderr_has) != std::string::npos;
    for (const auto& tok : e.args) {
      if (!ok) break;
      const bool prefix = !tok.empty() && tok.back() == '*';
      const std::string want = prefix ? tok.substr(0, tok.size() - 1) : tok;
      ok = std::any_of(args.begin(), args.end(), [&](const std::string& a) {
        return prefix ? a.rfind(want, 0) == 0 : a == want;
      });
    }
    if (ok) return &e;
  }
  return nullptr;
}

// ---- the driver ----------------------------------------------------------

struct Options {
  uint64_t seed = 1;
  int cases = 100;
  int jobs = 1;
  int only = -1;
  int timeout_s = 300;
  bool keep = false;
  bool list = false;
  std::string clang = "clang-16";
  std::string clangxx;  // default: from --clang
  std::string wrapper;  // default: the runfiles' phaseloop-cc
  std::string wrapperxx;
  std::string fixtures;  // default: the runfiles' compiler_driver/fixtures
  std::string allowlist;
  std::string scratch;  // default: $TEST_TMPDIR or $TMPDIR or /tmp
};

const char kUsage[] =
    "usage: argv_fuzz [flags]\n"
    "  Differential fuzzing of phaseloop-cc/phaseloop-c++ against clang-16/\n"
    "  clang++-16 on random command lines over the fixture programs.\n"
    "  --seed N          the seed (default 1); case K depends on (N, K) only\n"
    "  --cases N         how many cases (default 100)\n"
    "  --only K          run case K of the seed only (to replay one)\n"
    "  --jobs N          cases run side by side (default 1)\n"
    "  --clang PATH      clang for C (default clang-16)\n"
    "  --clang++ PATH    clang for C++ (default --clang with clang -> "
    "clang++)\n"
    "  --wrapper PATH    phaseloop-cc (default: from the runfiles)\n"
    "  --wrapper++ PATH  phaseloop-c++ (default: phaseloop-c++ beside "
    "--wrapper)\n"
    "  --fixtures DIR    the *.c/*.cc programs (default: compiler_driver/"
    "fixtures)\n"
    "  --allowlist FILE  known disagreements (one a line: NAME [args=TOK,..]\n"
    "                    differs=KIND,.. [stderr-has=TEXT]) are printed as\n"
    "                    KNOWN and do not fail the run\n"
    "  --keep            keep the scratch directories of failing cases\n"
    "  --scratch DIR     where scratch directories go (default $TEST_TMPDIR,\n"
    "                    $TMPDIR or /tmp)\n"
    "  --timeout S       seconds per compiler run (default 300)\n"
    "  --list            print the cases' command lines, run nothing\n"
    "  --help            this text\n"
    "Prints every disagreement (argv and what differs), then\n"
    "\"N cases, D disagreements\"; exits 0 iff D == 0 (not counting\n"
    "disagreements the allowlist covers).\n";

std::string Absolute(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  std::string out = resolved ? resolved : path;
  free(resolved);
  return out;
}

// A runfile's path: relative to the working directory (bazel test/run),
// else under argv[0].runfiles/phaseloop.
std::string Runfile(const char* argv0, const std::string& rel) {
  if (access(rel.c_str(), F_OK) == 0) return Absolute(rel);
  const std::string beside = std::string(argv0) + ".runfiles/phaseloop/" + rel;
  if (access(beside.c_str(), F_OK) == 0) return Absolute(beside);
  return rel;
}

std::string Quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                        "-_=+.,/@:%") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char ch : s)
    out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string CommandLine(const Case& c, const Options& o) {
  std::string out = c.cxx ? "clang++-16" : "clang-16";
  for (const auto& a : c.args) out += " " + Quote(a);
  if (!c.stdin_fixture.empty()) out += " < " + c.stdin_fixture;
  for (const auto& [name, contents] : c.files) {
    if (name == "args.rsp") out += "   [args.rsp: " + contents + "]";
  }
  for (char& ch : out) {
    if (ch == '\n') ch = ' ';
  }
  (void)o;
  return out;
}

struct Outcome {
  bool ran = false;
  Difference diff;
  std::string kept;  // where the scratch dirs were kept
};

class Fuzzer {
 public:
  Fuzzer(Options o, std::string root, std::vector<std::string> base_env)
      : o_(std::move(o)), root_(std::move(root)), env_(std::move(base_env)) {}

  Outcome RunCase(const Case& c, int worker) {
    const std::string wdir = root_ + "/w" + std::to_string(worker);
    const std::string scratch = wdir + "/work";
    std::vector<std::string> env = env_;
    env.push_back("PHASELOOP_SPOOL=" + wdir + "/spool");
    env.push_back("PHASELOOP_CONFIG=" + root_ + "/empty.conf");
    // The driver's temporary files: a directory of the worker's, so their
    // names can be normalised and leftovers seen.
    const std::string tmp = wdir + "/tmp";
    env.erase(std::remove_if(env.begin(), env.end(),
                             [](const std::string& e) {
                               return e.rfind("TMPDIR=", 0) == 0;
                             }),
              env.end());
    env.push_back("TMPDIR=" + tmp);
    const std::string stdin_path = c.stdin_fixture.empty()
                                       ? std::string("/dev/null")
                                       : o_.fixtures + "/" + c.stdin_fixture;
    std::vector<std::string> clang_argv = {c.cxx ? o_.clangxx : o_.clang};
    std::vector<std::string> wrapper_argv = {c.cxx ? o_.wrapperxx : o_.wrapper,
                                             "--phaseloop-policy=baseline"};
    clang_argv.insert(clang_argv.end(), c.args.begin(), c.args.end());
    wrapper_argv.insert(wrapper_argv.end(), c.args.begin(), c.args.end());

    RunResult results[2];
    const std::vector<std::string>* argvs[2] = {&clang_argv, &wrapper_argv};
    const char* tags[2] = {"clang", "wrapper"};
    for (int side = 0; side < 2; ++side) {
      std::error_code ec;
      fs::remove_all(scratch, ec);
      fs::create_directories(scratch);
      for (const auto& f : c.inputs) {
        fs::copy_file(o_.fixtures + "/" + f, scratch + "/" + f,
                      fs::copy_options::overwrite_existing, ec);
      }
      for (const auto& [name, contents] : c.files) {
        WriteFile(scratch + "/" + name, contents);
      }
      fs::remove_all(tmp, ec);
      fs::create_directories(tmp);
      results[side] = Run(*argvs[side], env, scratch, stdin_path,
                          wdir + "/" + tags[side], o_.timeout_s);
      // Temporary files left behind count as files made, names and contents
      // normalised (clang's crash reproducer, NAME-XXXXXX.sh, names the
      // NAME-XXXXXX.c beside it).
      static const std::regex kBareTempName("([A-Za-z0-9_]+)-[0-9a-f]{6}\\.");
      for (const auto& [name, bytes] : Snapshot(tmp).files) {
        results[side].tree.files[Normalise(tmp + "/" + name, scratch, tmp)] =
            std::regex_replace(Normalise(bytes, scratch, tmp), kBareTempName,
                               "$1-XXXXXX.");
      }
      if (side == 0) {
        fs::remove_all(wdir + "/clang-side", ec);
        fs::rename(scratch, wdir + "/clang-side", ec);
      }
    }
    Outcome out;
    out.ran = true;
    out.diff = Compare(results[0], results[1], scratch, tmp);
    std::error_code ec;
    if (!out.diff.kinds.empty() && o_.keep) {
      const std::string keep = root_ + "/case" + std::to_string(c.index);
      fs::create_directories(keep, ec);
      fs::rename(wdir + "/clang-side", keep + "/clang", ec);
      fs::rename(scratch, keep + "/wrapper", ec);
      for (int side = 0; side < 2; ++side) {
        WriteFile(keep + "/" + tags[side] + ".stdout", results[side].out);
        WriteFile(keep + "/" + tags[side] + ".stderr", results[side].err);
      }
      std::string cmd;
      for (const auto& a : wrapper_argv) cmd += Quote(a) + " ";
      WriteFile(keep + "/argv", cmd + "\n");
      out.kept = keep;
    }
    fs::remove_all(wdir + "/clang-side", ec);
    fs::remove_all(scratch, ec);
    return out;
  }

 private:
  Options o_;
  std::string root_;
  std::vector<std::string> env_;
};

bool ParseInt(const std::string& s, long long* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto need = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "argv_fuzz: %s needs a value\n", arg.c_str());
        return false;
      }
      value = argv[++i];
      return true;
    };
    auto need_int = [&](long long lo, long long* n) -> bool {
      if (!need()) return false;
      if (!ParseInt(value, n) || *n < lo) {
        std::fprintf(stderr, "argv_fuzz: bad %s value '%s'\n", arg.c_str(),
                     value.c_str());
        return false;
      }
      return true;
    };
    long long n = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--keep") {
      o.keep = true;
    } else if (arg == "--list") {
      o.list = true;
    } else if (arg == "--seed") {
      if (!need_int(0, &n)) return 2;
      o.seed = static_cast<uint64_t>(n);
    } else if (arg == "--cases") {
      if (!need_int(0, &n)) return 2;
      o.cases = static_cast<int>(n);
    } else if (arg == "--only") {
      if (!need_int(0, &n)) return 2;
      o.only = static_cast<int>(n);
    } else if (arg == "--jobs") {
      if (!need_int(1, &n)) return 2;
      o.jobs = static_cast<int>(n);
    } else if (arg == "--timeout") {
      if (!need_int(1, &n)) return 2;
      o.timeout_s = static_cast<int>(n);
    } else if (arg == "--clang") {
      if (!need()) return 2;
      o.clang = value;
    } else if (arg == "--clang++") {
      if (!need()) return 2;
      o.clangxx = value;
    } else if (arg == "--wrapper") {
      if (!need()) return 2;
      o.wrapper = value;
    } else if (arg == "--wrapper++") {
      if (!need()) return 2;
      o.wrapperxx = value;
    } else if (arg == "--fixtures") {
      if (!need()) return 2;
      o.fixtures = value;
    } else if (arg == "--allowlist") {
      if (!need()) return 2;
      o.allowlist = value;
    } else if (arg == "--scratch") {
      if (!need()) return 2;
      o.scratch = value;
    } else {
      std::fprintf(stderr, "argv_fuzz: unknown flag '%s' (see --help)\n",
                   argv[i]);
      return 2;
    }
  }

  // Programs and fixtures, absolute (the runs happen elsewhere).
  if (o.clangxx.empty()) {
    o.clangxx = o.clang;
    const size_t slash = o.clangxx.rfind('/');
    const size_t at =
        o.clangxx.find("clang", slash == std::string::npos ? 0 : slash + 1);
    if (at != std::string::npos) o.clangxx.insert(at + 5, "++");
  }
  o.clang = ResolveProgram(o.clang);
  o.clangxx = ResolveProgram(o.clangxx);
  if (o.wrapper.empty()) {
    o.wrapper = Runfile(argv[0], "compiler_driver/cc_wrapper/phaseloop-cc");
  }
  o.wrapper = Absolute(o.wrapper);
  if (o.wrapperxx.empty()) {
    o.wrapperxx =
        o.wrapper.substr(0, o.wrapper.rfind('/') + 1) + "phaseloop-c++";
  }
  o.wrapperxx = Absolute(o.wrapperxx);
  if (o.fixtures.empty()) {
    o.fixtures = Runfile(argv[0], "compiler_driver/fixtures");
  }
  o.fixtures = Absolute(o.fixtures);
  for (const std::string* p :
       {&o.clang, &o.clangxx, &o.wrapper, &o.wrapperxx}) {
    if (!o.list && access(p->c_str(), X_OK) != 0) {
      std::fprintf(stderr, "argv_fuzz: cannot run %s (see --help)\n",
                   p->c_str());
      return 2;
    }
  }
  std::vector<std::string> c_srcs, cc_srcs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.fixtures, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".c") c_srcs.push_back(name);
    if (e.path().extension() == ".cc") cc_srcs.push_back(name);
  }
  std::sort(c_srcs.begin(), c_srcs.end());
  std::sort(cc_srcs.begin(), cc_srcs.end());
  if (c_srcs.empty() || cc_srcs.empty()) {
    std::fprintf(stderr, "argv_fuzz: no *.c and *.cc fixtures in %s\n",
                 o.fixtures.c_str());
    return 2;
  }
  std::vector<KnownEntry> known;
  if (!o.allowlist.empty()) {
    std::string error;
    if (!LoadAllowlist(o.allowlist, &known, &error)) {
      std::fprintf(stderr, "argv_fuzz: %s\n", error.c_str());
      return 2;
    }
  }

  std::vector<Case> cases;
  if (o.only >= 0) {
    cases.push_back(Generate(o.seed, o.only, c_srcs, cc_srcs));
  } else {
    for (int i = 0; i < o.cases; ++i) {
      cases.push_back(Generate(o.seed, i, c_srcs, cc_srcs));
    }
  }
  if (o.list) {
    for (const auto& c : cases) {
      std::printf("case %d: %s\n", c.index, CommandLine(c, o).c_str());
    }
    return 0;
  }

  // Scratch root and the environment every run gets.
  if (o.scratch.empty()) {
    const char* t = std::getenv("TEST_TMPDIR");
    if (t == nullptr) t = std::getenv("TMPDIR");
    o.scratch = t ? t : "/tmp";
  }
  std::string pattern = o.scratch + "/argv_fuzz.XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    std::fprintf(stderr, "argv_fuzz: cannot create a directory in %s: %s\n",
                 o.scratch.c_str(), std::strerror(errno));
    return 2;
  }
  const std::string root = Absolute(buf.data());
  WriteFile(root + "/empty.conf", "# no settings: defaults\n");
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PHASELOOP_", 10) != 0) env.push_back(*e);
  }

  std::printf("argv_fuzz: seed %llu, %zu cases, clang %s / %s, wrapper %s\n",
              static_cast<unsigned long long>(o.seed), cases.size(),
              o.clang.c_str(), o.clangxx.c_str(), o.wrapper.c_str());
  std::fflush(stdout);

  Fuzzer fuzzer(o, root, env);
  std::vector<Outcome> outcomes(cases.size());
  std::atomic<size_t> next{0};
  std::mutex print_mu;
  size_t printed = 0;
  std::vector<bool> done(cases.size(), false);
  int disagreements = 0, known_hits = 0;
  std::map<std::string, int> known_counts;

  // Reports in case order as results arrive.
  auto report = [&]() {
    while (printed < cases.size() && done[printed]) {
      const Case& c = cases[printed];
      const Outcome& r = outcomes[printed];
      ++printed;
      if (r.diff.kinds.empty()) continue;
      const KnownEntry* entry = Covering(known, c, r.diff);
      if (entry != nullptr) {
        ++known_hits;
        ++known_counts[entry->name];
      } else {
        ++disagreements;
      }
      std::string kinds;
      for (const auto& k : r.diff.kinds)
        kinds += (kinds.empty() ? "" : ",") + k;
      std::printf("%s case %d (%s): %s\n", entry ? "KNOWN" : "DISAGREEMENT",
                  c.index, kinds.c_str(), CommandLine(c, o).c_str());
      if (entry != nullptr) {
        std::printf("    known disagreement '%s' (%s:%d)\n",
                    entry->name.c_str(), o.allowlist.c_str(), entry->line);
      }
      for (const auto& d : r.diff.details) {
        std::printf("    %s\n", d.c_str());
      }
      if (!r.kept.empty()) std::printf("    kept: %s\n", r.kept.c_str());
      std::printf("    replay: argv_fuzz --seed %llu --only %d --keep\n",
                  static_cast<unsigned long long>(o.seed), c.index);
      std::fflush(stdout);
    }
  };
  auto worker = [&](int w) {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= cases.size()) return;
      Outcome r = fuzzer.RunCase(cases[i], w);
      std::lock_guard<std::mutex> lock(print_mu);
      outcomes[i] = std::move(r);
      done[i] = true;
      report();
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < o.jobs; ++w) threads.emplace_back(worker, w);
  for (auto& t : threads) t.join();

  if (!o.keep || (disagreements == 0 && known_hits == 0)) {
    fs::remove_all(root, ec);
  } else {
    std::printf("scratch kept under %s\n", root.c_str());
  }
  for (const auto& [name, count] : known_counts) {
    std::printf("known disagreement '%s': %d case(s)\n", name.c_str(), count);
  }
  std::printf("%zu cases, %d disagreements", cases.size(), disagreements);
  if (!known.empty()) std::printf(" (+%d known, allowlisted)", known_hits);
  std::printf("\n");
  return disagreements == 0 ? 0 : 1;
}

}  // namespace
}  // namespace phaseloop::argv_fuzz

int main(int argc, char** argv) {
  return phaseloop::argv_fuzz::Main(argc, argv);
}
