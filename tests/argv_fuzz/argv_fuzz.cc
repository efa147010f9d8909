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
// When the output's bytes differ, clang runs a second time: bytes clang-16
// itself does not reproduce (-gembed-source with -g3 writes other bytes on
// every run) are not the wrapper's, and such a case is printed as
// CLANG-UNSTABLE and counted apart.
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

#include "tests/argv_fuzz/allowlist.h"
#include "tests/argv_fuzz/compare.h"
#include "tests/argv_fuzz/fuzz_case.h"
#include "tests/argv_fuzz/scratch_run.h"

namespace phaseloop::argv_fuzz {
namespace {

namespace fs = std::filesystem;

// ---- the driver ----------------------------------------------------------

struct Options {
  uint64_t seed = 1;
  int cases = 100;
  int first = 0;
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
    "  --first K         start at case K (default 0): a long run in pieces,\n"
    "                    e.g. --first 5000 --cases 5000 is its second half\n"
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
  // Kinds in which clang differed from itself on a second run (e.g.
  // -gembed-source -g3: clang-16 writes other bytes each time): not the
  // wrapper's; left out of diff and counted apart.
  std::set<std::string> clang_unstable;
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
    // Runs one side in a fresh scratch directory; side 0 (clang) leaves its
    // directory as clang-side.
    auto run_side = [&](const std::vector<std::string>& argv, const char* tag,
                        bool keep_as_clang_side) {
      RunResult result;
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
      result =
          Run(argv, env, scratch, stdin_path, wdir + "/" + tag, o_.timeout_s);
      // Temporary files left behind count as files made, names and contents
      // normalised (clang's crash reproducer, NAME-XXXXXX.sh, names the
      // NAME-XXXXXX.c beside it).
      static const std::regex kBareTempName("([A-Za-z0-9_]+)-[0-9a-f]{6}\\.");
      for (const auto& [name, bytes] : Snapshot(tmp).files) {
        result.tree.files[Normalise(tmp + "/" + name, scratch, tmp)] =
            std::regex_replace(Normalise(bytes, scratch, tmp), kBareTempName,
                               "$1-XXXXXX.");
      }
      if (keep_as_clang_side) {
        fs::remove_all(wdir + "/clang-side", ec);
        fs::rename(scratch, wdir + "/clang-side", ec);
      }
      return result;
    };
    for (int side = 0; side < 2; ++side) {
      results[side] = run_side(*argvs[side], tags[side], side == 0);
    }
    Outcome out;
    out.ran = true;
    out.diff = Compare(results[0], results[1], scratch, tmp);
    std::error_code ec;
    // Output that differs may be clang's own nondeterminism: clang runs
    // again, and kinds it differs from itself in are not the wrapper's.
    if (out.diff.kinds.count("stdout") || out.diff.kinds.count("bytes")) {
      fs::remove_all(wdir + "/wrapper-side", ec);
      fs::rename(scratch, wdir + "/wrapper-side", ec);  // kept for --keep
      const RunResult again = run_side(clang_argv, "clang-again", false);
      fs::remove_all(scratch, ec);
      fs::rename(wdir + "/wrapper-side", scratch, ec);
      const Difference self = Compare(results[0], again, scratch, tmp);
      for (const char* kind : {"stdout", "bytes"}) {
        if (self.kinds.count(kind) && out.diff.kinds.erase(kind) > 0) {
          out.clang_unstable.insert(kind);
        }
      }
      if (out.diff.kinds.empty()) out.diff.details.clear();
    }
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
    } else if (arg == "--first") {
      if (!need_int(0, &n)) return 2;
      o.first = static_cast<int>(n);
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
    for (int i = o.first; i < o.first + o.cases; ++i) {
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

  std::printf(
      "argv_fuzz: seed %llu, %zu cases from case %d, clang %s / %s, wrapper "
      "%s\n",
      static_cast<unsigned long long>(o.seed), cases.size(),
      o.only >= 0 ? o.only : o.first, o.clang.c_str(), o.clangxx.c_str(),
      o.wrapper.c_str());
  std::fflush(stdout);

  Fuzzer fuzzer(o, root, env);
  std::vector<Outcome> outcomes(cases.size());
  std::atomic<size_t> next{0};
  std::mutex print_mu;
  size_t printed = 0;
  std::vector<bool> done(cases.size(), false);
  int disagreements = 0, known_hits = 0, clang_unstable = 0;
  std::map<std::string, int> known_counts;

  // Reports in case order as results arrive.
  auto report = [&]() {
    while (printed < cases.size() && done[printed]) {
      // A long run says how far it is (once per count: the loop's body runs
      // once per case).
      if (printed > 0 && printed % 1000 == 0) {
        std::printf("... %zu of %zu cases, %d disagreements so far\n", printed,
                    cases.size(), disagreements);
        std::fflush(stdout);
      }
      const Case& c = cases[printed];
      const Outcome& r = outcomes[printed];
      ++printed;
      if (!r.clang_unstable.empty()) {
        ++clang_unstable;
        std::printf(
            "CLANG-UNSTABLE case %d: clang-16 differs from itself; "
            "not counted: %s\n",
            c.index, CommandLine(c, o).c_str());
      }
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
  if (clang_unstable > 0) {
    std::printf("; %d where clang-16 differs from itself (not counted)",
                clang_unstable);
  }
  std::printf("\n");
  return disagreements == 0 ? 0 : 1;
}

}  // namespace
}  // namespace phaseloop::argv_fuzz

int main(int argc, char** argv) {
  return phaseloop::argv_fuzz::Main(argc, argv);
}
