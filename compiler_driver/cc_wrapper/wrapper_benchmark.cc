// Compile-time cost of phaseloop-cc against plain clang-16 (issue #3).
//
//   tools/bazel.sh run -c opt //compiler_driver/cc_wrapper:wrapper_benchmark --
//       [--reps N] [--json] [--wrapper PATH] [--clang PATH] [--bzip2 DIR]
//       [--opt-level O2|Os|Oz|...] [--policy SPEC] [--flag F]...
//
// --flag appends a compiler flag to every unit's (both sides), e.g.
// --flag -flto=thin for the cost of an LTO compile (bitcode written);
// --opt-level replaces the units' -O2 (the size policies act only at
// -Oz); --policy replaces the policy variant's `baseline`, e.g.
// 'artifact:configs/policies/default.plpolicy?mode=topk&k=4&budget=10000'
// for the shipped default's compile cost. The printed targets are issue
// #3's, for the baseline policy at -O2.
//
// Six variants of each translation unit, run interleaved (every repetition
// runs each variant once, the order rotating per repetition) so that drift of
// the machine hits all variants alike; medians over the repetitions:
//   clang      clang-16 <flags> -c                         (reference)
//   policy     phaseloop-cc <flags> -c, PHASELOOP_POLICY=baseline (--policy),
//              the outcome cache emptied before each run (a cold build)
//   disabled   PHASELOOP_DISABLE=1 phaseloop-cc <flags> -c (kill switch)
//   clang -E   clang-16 -E                                 (reference)
//   pass       phaseloop-cc -E                             (pass-through path)
//   warm       the policy variant with topk's outcome cache
//              (PHASELOOP_OUTCOME_CACHE) filled by a run of every unit
//              before the repetitions: a rebuild's cost (one pipeline per
//              TU for a topk policy; equal to `policy` for other policies)
// Translation units: bzip2's .c files (Debian source package, from
// tools/fetch_sources.sh; bzip2's own flags -Wall -Winline -O2 -g
// -D_FILE_OFFSET_BITS=64) and compiler_driver/fixtures/*.c (-O2). The whole
// bzip2 build (its TUs in sequence) is measured as one more unit.
//
// Wall time is fork to wait4; peak RSS is wait4's ru_maxrss, which on Linux
// is the largest of the child and the descendants it waited for (the
// wrapper's clang and optimizer processes); CPU time (user + sys, the child
// and its waited-for descendants) is reported too, because on a shared
// 2-core machine it is steadier than wall time. A failing compile aborts the
// run. Decision records go to a temporary spool, removed at the end.

#include <pwd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

enum Variant {
  kClang,
  kPolicy,
  kDisabled,
  kClangE,
  kPassThrough,
  kPolicyWarm,
  kNumVariants
};
const char* const kVariantNames[kNumVariants] = {
    "clang", "policy", "disabled", "clang_E", "pass_through", "policy_warm"};

struct Options {
  int reps = 5;
  bool json = false;
  std::string wrapper = "compiler_driver/cc_wrapper/phaseloop-cc";
  std::string clang = "/usr/bin/clang-16";
  std::string bzip2_dir;  // default: the fetch_sources.sh cache
  std::string opt_level = "O2";
  std::string policy = "baseline";
  std::vector<std::string> extra_flags;  // --flag, on every unit
};

struct Unit {
  std::string name;
  std::vector<std::string> sources;  // one TU, or a whole build in sequence
  std::vector<std::string> flags;    // without -c / -E / -o
};

struct Sample {
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + sys
  long max_rss_kb = 0;
};

std::string Absolute(const std::string& path) {
  return fs::absolute(path).string();
}

// Runs argv with `env` as the whole environment, output discarded. Returns
// false (and prints why) when it cannot run or exits non-zero.
bool RunOnce(const std::vector<std::string>& argv,
             const std::vector<std::string>& env, Sample* sample) {
  std::vector<char*> args, envp;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("wrapper_benchmark: fork");
    return false;
  }
  if (pid == 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr ||
        std::freopen("/dev/null", "w", stderr) == nullptr) {
      _exit(126);
    }
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid) {
    std::perror("wrapper_benchmark: wait4");
    return false;
  }
  sample->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  sample->cpu_seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                        (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  sample->max_rss_kb = usage.ru_maxrss;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line;
    for (const std::string& a : argv) line += a + " ";
    std::fprintf(stderr, "wrapper_benchmark: command failed (status %d): %s\n",
                 status, line.c_str());
    return false;
  }
  return true;
}

// The environment of every child: ours without PHASELOOP_*, no config file
// (an empty PHASELOOP_CONFIG reads none), plus `extra`.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::string>& extra) {
  std::vector<std::string> env = {"PHASELOOP_CONFIG="};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PHASELOOP_", 10) != 0) env.push_back(*e);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

class Benchmark {
 public:
  Benchmark(const Options& options, const std::string& tmp)
      : options_(options), tmp_(tmp) {
    const std::string spool = "PHASELOOP_SPOOL=" + tmp + "/spool";
    fs::create_directories(tmp + "/spool");
    env_plain_ = ChildEnvironment({});
    // Cold: the outcome cache on (the default) but emptied before every
    // run of a unit, so each repetition pays what a first build pays:
    // topk's measurements and the cache's stores.
    env_policy_ =
        ChildEnvironment({spool, "PHASELOOP_POLICY=" + options.policy,
                          "PHASELOOP_OUTCOME_CACHE=" + tmp + "/cold"});
    env_disabled_ = ChildEnvironment({spool, "PHASELOOP_DISABLE=1"});
    env_warm_ =
        ChildEnvironment({spool, "PHASELOOP_POLICY=" + options.policy,
                          "PHASELOOP_OUTCOME_CACHE=" + tmp + "/outcomes"});
  }

  // Runs one unit in one variant (every source in sequence): wall time added
  // up, peak RSS the largest.
  bool Run(const Unit& unit, Variant variant, Sample* total) {
    *total = Sample();
    // The cold variant's choices stored by its last run are dropped (its
    // memo of the optimizer's identity stays, as on a user's machine).
    if (variant == kPolicy) fs::remove_all(tmp_ + "/cold/outcomes");
    for (const std::string& source : unit.sources) {
      const bool wrapper = variant == kPolicy || variant == kDisabled ||
                           variant == kPassThrough || variant == kPolicyWarm;
      const bool preprocess = variant == kClangE || variant == kPassThrough;
      std::vector<std::string> argv = {wrapper ? options_.wrapper
                                               : options_.clang};
      argv.insert(argv.end(), unit.flags.begin(), unit.flags.end());
      argv.insert(argv.end(), {preprocess ? "-E" : "-c", source, "-o",
                               tmp_ + (preprocess ? "/out.i" : "/out.o")});
      const std::vector<std::string>& env = variant == kPolicy ? env_policy_
                                            : variant == kPolicyWarm ? env_warm_
                                            : variant == kDisabled
                                                ? env_disabled_
                                                : env_plain_;
      Sample one;
      if (!RunOnce(argv, env, &one)) return false;
      total->seconds += one.seconds;
      total->cpu_seconds += one.cpu_seconds;
      total->max_rss_kb = std::max(total->max_rss_kb, one.max_rss_kb);
    }
    return true;
  }

 private:
  Options options_;
  std::string tmp_;
  std::vector<std::string> env_plain_, env_policy_, env_disabled_, env_warm_;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Summary {
  double ms[kNumVariants];      // wall
  double cpu_ms[kNumVariants];  // user + sys
  double rss_mb[kNumVariants];
};

Summary Summarize(const std::vector<std::vector<Sample>>& by_variant) {
  Summary s;
  for (int v = 0; v < kNumVariants; ++v) {
    std::vector<double> t, c, r;
    for (const Sample& x : by_variant[v]) {
      t.push_back(x.seconds * 1e3);
      c.push_back(x.cpu_seconds * 1e3);
      r.push_back(x.max_rss_kb / 1024.0);
    }
    s.ms[v] = Median(t);
    s.cpu_ms[v] = Median(c);
    s.rss_mb[v] = Median(r);
  }
  return s;
}

// The three ratios the targets are about: policy and disabled against clang
// -c, pass-through against clang -E.
struct Ratios {
  double policy, disabled, pass_through, policy_warm;
};
Ratios TimeRatios(const Summary& s) {
  return {s.ms[kPolicy] / s.ms[kClang], s.ms[kDisabled] / s.ms[kClang],
          s.ms[kPassThrough] / s.ms[kClangE], s.ms[kPolicyWarm] / s.ms[kClang]};
}
Ratios CpuRatios(const Summary& s) {
  return {s.cpu_ms[kPolicy] / s.cpu_ms[kClang],
          s.cpu_ms[kDisabled] / s.cpu_ms[kClang],
          s.cpu_ms[kPassThrough] / s.cpu_ms[kClangE],
          s.cpu_ms[kPolicyWarm] / s.cpu_ms[kClang]};
}
Ratios RssRatios(const Summary& s) {
  return {s.rss_mb[kPolicy] / s.rss_mb[kClang],
          s.rss_mb[kDisabled] / s.rss_mb[kClang],
          s.rss_mb[kPassThrough] / s.rss_mb[kClangE],
          s.rss_mb[kPolicyWarm] / s.rss_mb[kClang]};
}

double GeoMean(const std::vector<double>& v) {
  double log_sum = 0;
  for (double x : v) log_sum += std::log(x);
  return v.empty() ? 0 : std::exp(log_sum / v.size());
}

std::string DefaultBzip2Dir() {
  if (const char* cache = std::getenv("PHASELOOP_CACHE")) {
    return std::string(cache) + "/debian-src/bzip2";
  }
  // The real user's home: `bazel run` may not pass HOME through.
  const struct passwd* pw = getpwuid(getuid());
  const char* home = pw != nullptr ? pw->pw_dir : std::getenv("HOME");
  return std::string(home != nullptr ? home : "") +
         "/.cache/phaseloop/debian-src/bzip2";
}

// Fills `units`; false (with a message) when sources are missing.
bool CollectUnits(const Options& options, std::vector<Unit>* units) {
  const std::string level = "-" + options.opt_level;
  std::vector<std::string> bz_flags = {"-Wall", "-Winline", level, "-g",
                                       "-D_FILE_OFFSET_BITS=64"};
  std::vector<std::string> fixture_flags = {level};
  for (const std::string& flag : options.extra_flags) {
    bz_flags.push_back(flag);
    fixture_flags.push_back(flag);
  }
  const char* const bz_files[] = {"blocksort", "huffman",  "crctable",
                                  "randtable", "compress", "decompress",
                                  "bzlib",     "bzip2",    "bzip2recover"};
  Unit whole{"bzip2 whole build", {}, bz_flags};
  for (const char* f : bz_files) {
    const std::string path = options.bzip2_dir + "/" + f + ".c";
    if (!fs::exists(path)) {
      std::fprintf(
          stderr,
          "wrapper_benchmark: %s not found; run tools/fetch_sources.sh or pass "
          "--bzip2 DIR (an unpacked bzip2 source tree)\n",
          path.c_str());
      return false;
    }
    units->push_back({std::string("bzip2/") + f + ".c", {path}, bz_flags});
    whole.sources.push_back(path);
  }
  std::vector<std::string> fixtures;
  for (const auto& entry : fs::directory_iterator("compiler_driver/fixtures")) {
    if (entry.path().extension() == ".c")
      fixtures.push_back(Absolute(entry.path().string()));
  }
  std::sort(fixtures.begin(), fixtures.end());
  for (const std::string& f : fixtures) {
    units->push_back(
        {"fixtures/" + fs::path(f).filename().string(), {f}, fixture_flags});
  }
  units->push_back(whole);
  return true;
}

const char* Verdict(double ratio, double target) {
  return ratio <= target ? "met" : "NOT met";
}

void PrintTable(const Options& options, const std::vector<Unit>& units,
                const std::vector<Summary>& summaries) {
  std::string flags;
  for (const std::string& flag : options.extra_flags) flags += ", " + flag;
  std::printf(
      "phaseloop-cc vs clang-16: %d interleaved repetitions, medians, -%s, "
      "policy %s%s\n"
      "wrapper %s\nclang   %s\n\n",
      options.reps, options.opt_level.c_str(), options.policy.c_str(),
      flags.c_str(),
      options.wrapper.c_str(), options.clang.c_str());
  std::printf("%-22s %9s %9s %6s %9s %6s %8s %8s %6s %8s %8s %6s\n", "unit",
              "clang ms", "policy", "ratio", "disabled", "ratio", "-E ms",
              "pass", "ratio", "RSS MB", "policy", "ratio");
  std::vector<double> tu_policy, tu_disabled, tu_pass, tu_rss;
  for (size_t u = 0; u < units.size(); ++u) {
    const Summary& s = summaries[u];
    const Ratios t = TimeRatios(s), r = RssRatios(s);
    if (units[u].sources.size() == 1) {
      tu_policy.push_back(t.policy);
      tu_disabled.push_back(t.disabled);
      tu_pass.push_back(t.pass_through);
      tu_rss.push_back(r.policy);
    } else {
      std::printf("%s\n", std::string(118, '-').c_str());
    }
    std::printf(
        "%-22s %9.1f %9.1f %6.3f %9.1f %6.3f %8.1f %8.1f %6.3f %8.1f %8.1f "
        "%6.3f\n",
        units[u].name.c_str(), s.ms[kClang], s.ms[kPolicy], t.policy,
        s.ms[kDisabled], t.disabled, s.ms[kClangE], s.ms[kPassThrough],
        t.pass_through, s.rss_mb[kClang], s.rss_mb[kPolicy], r.policy);
  }
  std::printf("%-22s %9s %9s %6.3f %9s %6.3f %8s %8s %6.3f %8s %8s %6.3f\n\n",
              "geomean over TUs", "", "", GeoMean(tu_policy), "",
              GeoMean(tu_disabled), "", "", GeoMean(tu_pass), "", "",
              GeoMean(tu_rss));
  const Ratios wall = TimeRatios(summaries.back()),
               cpu = CpuRatios(summaries.back());
  std::printf(
      "targets, whole bzip2 build (wall / CPU user+sys; per-TU wall "
      "geomean):\n");
  const struct {
    const char* name;
    double wall, cpu, tu, target;
  } rows[] = {
      {"policy path", wall.policy, cpu.policy, GeoMean(tu_policy), 1.10},
      {"disabled", wall.disabled, cpu.disabled, GeoMean(tu_disabled), 1.03},
      {"pass-through", wall.pass_through, cpu.pass_through, GeoMean(tu_pass),
       1.03}};
  for (const auto& row : rows) {
    std::printf(
        "  %-13s <= %.2fx: wall %.3f (%s)  CPU %.3f (%s)  per-TU %.3f\n",
        row.name, row.target, row.wall, Verdict(row.wall, row.target), row.cpu,
        Verdict(row.cpu, row.target), row.tu);
  }
  std::printf(
      "  warm outcome cache (a rebuild): wall %.3f  CPU %.3f of clang's "
      "(cold: %.3f)\n",
      wall.policy_warm, cpu.policy_warm, wall.policy);
}

// `"key": {"clang": v0, "policy": v1, ...}` for the six variants.
void PrintVariants(const char* key, const double* values) {
  std::printf("\"%s\": {", key);
  for (int v = 0; v < kNumVariants; ++v) {
    std::printf("%s\"%s\": %.2f", v ? ", " : "", kVariantNames[v], values[v]);
  }
  std::printf("}");
}

void PrintRatios(const char* key, const Ratios& r) {
  std::printf(
      "\"%s\": {\"policy\": %.4f, \"disabled\": %.4f, \"pass_through\": "
      "%.4f, \"policy_warm\": %.4f}",
      key, r.policy, r.disabled, r.pass_through, r.policy_warm);
}

void PrintJson(const Options& options, const std::vector<Unit>& units,
               const std::vector<Summary>& summaries) {
  std::printf(
      "{\"reps\": %d, \"opt_level\": \"%s\", \"policy\": \"%s\", \"wrapper\": "
      "\"%s\", "
      "\"clang\": \"%s\", \"units\": [",
      options.reps, options.opt_level.c_str(), options.policy.c_str(),
      options.wrapper.c_str(), options.clang.c_str());
  for (size_t u = 0; u < units.size(); ++u) {
    const Summary& s = summaries[u];
    std::printf("%s\n  {\"name\": \"%s\", \"tus\": %zu, ", u ? "," : "",
                units[u].name.c_str(), units[u].sources.size());
    PrintVariants("median_ms", s.ms);
    std::printf(", ");
    PrintVariants("median_cpu_ms", s.cpu_ms);
    std::printf(", ");
    PrintVariants("median_rss_mb", s.rss_mb);
    std::printf(",\n   ");
    PrintRatios("time_ratio", TimeRatios(s));
    std::printf(", ");
    PrintRatios("cpu_ratio", CpuRatios(s));
    std::printf(", ");
    PrintRatios("rss_ratio", RssRatios(s));
    std::printf("}");
  }
  std::printf("\n]}\n");
}

bool ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--json") {
      options->json = true;
    } else if (arg == "--reps" && has_value) {
      options->reps = std::atoi(argv[++i]);
    } else if (arg == "--wrapper" && has_value) {
      options->wrapper = argv[++i];
    } else if (arg == "--clang" && has_value) {
      options->clang = argv[++i];
    } else if (arg == "--bzip2" && has_value) {
      options->bzip2_dir = argv[++i];
    } else if (arg == "--opt-level" && has_value) {
      options->opt_level = argv[++i];
    } else if (arg == "--policy" && has_value) {
      options->policy = argv[++i];
    } else if (arg == "--flag" && has_value) {
      options->extra_flags.push_back(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "wrapper_benchmark: bad argument '%s'\nusage: "
                   "wrapper_benchmark [--reps N] "
                   "[--json] [--wrapper PATH] [--clang PATH] [--bzip2 DIR] "
                   "[--opt-level O2|Os|Oz] "
                   "[--policy SPEC] [--flag F]...\n",
                   arg.c_str());
      return false;
    }
  }
  if (options->reps < 1) {
    std::fprintf(stderr,
                 "wrapper_benchmark: --reps must be a positive number\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, &options)) return 2;
  if (options.bzip2_dir.empty()) options.bzip2_dir = DefaultBzip2Dir();
  options.wrapper = Absolute(options.wrapper);
  for (const std::string& tool : {options.wrapper, options.clang}) {
    if (access(tool.c_str(), X_OK) != 0) {
      std::fprintf(stderr, "wrapper_benchmark: %s is not an executable\n",
                   tool.c_str());
      return 2;
    }
  }
  std::vector<Unit> units;
  if (!CollectUnits(options, &units)) return 2;

  char tmp_template[] = "/tmp/phaseloop-wrapper-benchmark.XXXXXX";
  if (mkdtemp(tmp_template) == nullptr) {
    std::perror("wrapper_benchmark: mkdtemp");
    return 1;
  }
  const std::string tmp = tmp_template;
  Benchmark benchmark(options, tmp);
  // samples[unit][variant][rep]
  std::vector<std::vector<std::vector<Sample>>> samples(
      units.size(), std::vector<std::vector<Sample>>(kNumVariants));
  // Warm-up, not recorded: page cache, dynamic loader caches.
  bool ok = true;
  for (int v = 0; ok && v < kNumVariants; ++v) {
    Sample ignored;
    ok = benchmark.Run(units.front(), static_cast<Variant>(v), &ignored);
  }
  // The outcome cache of the warm variant: every unit once.
  for (size_t u = 0; ok && u < units.size(); ++u) {
    Sample ignored;
    ok = benchmark.Run(units[u], kPolicyWarm, &ignored);
  }
  for (int rep = 0; ok && rep < options.reps; ++rep) {
    std::fprintf(stderr, "wrapper_benchmark: repetition %d/%d\n", rep + 1,
                 options.reps);
    for (size_t u = 0; ok && u < units.size(); ++u) {
      for (int k = 0; ok && k < kNumVariants; ++k) {
        const Variant v = static_cast<Variant>((k + rep) % kNumVariants);
        Sample sample;
        ok = benchmark.Run(units[u], v, &sample);
        samples[u][v].push_back(sample);
      }
    }
  }
  std::error_code ignored;
  fs::remove_all(tmp, ignored);
  if (!ok) return 1;

  std::vector<Summary> summaries;
  for (const auto& by_variant : samples)
    summaries.push_back(Summarize(by_variant));
  if (options.json) {
    PrintJson(options, units, summaries);
  } else {
    PrintTable(options, units, summaries);
  }
  return 0;
}
