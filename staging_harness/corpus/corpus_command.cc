#include "staging_harness/corpus/corpus_command.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/subcommand.h"
#include "common/process/parallel_for.h"
#include "common/protobuf/utf8_text.h"
#include "common/timing/elapsed.h"
#include "staging_harness/corpus/corpus_builder.h"
#include "staging_harness/corpus/csmith_generator.h"
#include "staging_harness/corpus/debian_sources.h"

namespace phaseloop::corpus {
namespace {

namespace fs = std::filesystem;

int ExitCodeFor(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsNotFound(status)
             ? command::kExitBadInput
             : command::kExitInternal;
}

// Settings from the shared flags; InvalidArgument names the flag.
absl::StatusOr<CorpusSettings> SettingsFrom(const CorpusFlags& flags) {
  CorpusSettings settings;
  settings.objective = flags.objective;
  if (flags.convention == "research") {
    settings.convention = ir::ModuleConvention::kResearch;
  } else if (flags.convention != "real-build") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--convention '", flags.convention, "' is not real-build or research"));
  }
  settings.jobs = flags.jobs > 0 ? flags.jobs : process::DefaultJobs();
  settings.cflags = flags.cflags;
  settings.keep_test_sources = flags.keep_test_sources;
  std::string epoch = flags.source_date_epoch;
  if (epoch.empty()) {
    const char* env = std::getenv("SOURCE_DATE_EPOCH");
    epoch = env != nullptr && *env != '\0' ? env : "0";
  }
  if (epoch.find_first_not_of("0123456789") != std::string::npos ||
      epoch.size() > 12) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--source-date-epoch (or $SOURCE_DATE_EPOCH) '", epoch,
        "' is not a number of seconds since 1970, e.g. 0 or 1700000000"));
  }
  settings.source_date_epoch = epoch;
  absl::Status valid = ValidateSettings(settings);
  if (!valid.ok()) return valid;
  if (flags.out.empty()) return absl::InvalidArgumentError("--out is required");
  return settings;
}

std::set<std::string> OriginsOf(const Manifest& m) {
  std::set<std::string> origins;
  for (const auto& r : m.modules) origins.insert(r.origin());
  for (const auto& s : m.skipped) origins.insert(s.origin);
  return origins;
}

void PrintSummary(const std::string& dir, const Manifest& corpus,
                  double seconds, std::ostream& out) {
  const CorpusTotals t = Totals(corpus);
  out << "corpus " << dir << " (" << corpus.convention << ", -"
      << corpus.opt_level << "): " << t.modules << " modules, " << t.skipped
      << " skipped; ir_count O0 " << t.ir_count_o0 << ", O3 " << t.ir_count_o3
      << ", Oz " << t.ir_count_oz << "; " << static_cast<int64_t>(seconds)
      << " s\n";
}

// Adds the flags every corpus subcommand shares.
void AddCommonFlags(CLI::App* cmd, CorpusFlags& flags) {
  cmd->add_option("--out", flags.out,
                  "corpus directory (manifest.json, modules/)")
      ->required();
  cmd->add_option("--objective", flags.objective,
                  "size (frontend -Oz) or speed (-O3)")
      ->capture_default_str();
  cmd->add_option(
         "--convention", flags.convention,
         "real-build (clang -O<level> -Xclang -disable-llvm-passes) or "
         "research (-O0 -Xclang -disable-O0-optnone; for comparing with "
         "published figures only)")
      ->capture_default_str();
  // -1 became the default silently, and 100000 started as many threads.
  cmd->add_option("--jobs", flags.jobs,
                  "parallel jobs (0 or left out: all cores)")
      ->check(CLI::Range(0, 256));
  cmd->add_option(
      "--source-date-epoch", flags.source_date_epoch,
      "seconds since 1970 that __DATE__/__TIME__ expand to, so a "
      "rebuild gives the same modules (default: $SOURCE_DATE_EPOCH, "
      "else 0)");
  cmd->add_option("--cflag", flags.cflags,
                  "extra frontend flag, repeatable (e.g. --cflag=-DNDEBUG)")
      ->allow_extra_args(false);
  cmd->add_flag("--keep-test-sources", flags.keep_test_sources,
                "build C files named like tests (test*.c, *test.c, "
                "*tests.c) too; by default the manifest lists them under "
                "`skipped`, as it does everything else left out");
}

}  // namespace

int RunCorpusBuild(const BuildFlags& flags, std::ostream& out,
                   std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CorpusSettings> settings = SettingsFrom(flags.corpus);
  if (!settings.ok()) {
    err << "phaseloop corpus build: " << settings.status().message() << "\n";
    return command::kExitBadInput;
  }
  std::vector<SourceTree> trees;
  for (const std::string& dir : flags.source_dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      err << "phaseloop corpus build: '" << dir
          << "' is not a directory; pass directories of C sources\n";
      return command::kExitBadInput;
    }
    const fs::path canonical = fs::weakly_canonical(fs::absolute(dir), ec);
    if (!protobuf::IsValidUtf8(canonical.string())) {
      err << "phaseloop corpus build: '" << dir
          << "': its path is not UTF-8, and the manifest (JSON) records each "
             "module's origin by path; rename the directory (or a parent) "
             "to build it\n";
      return command::kExitBadInput;
    }
    trees.push_back({canonical.string(), canonical.filename().string(),
                     "dir:" + canonical.string()});
  }
  absl::StatusOr<Manifest> corpus = OpenCorpus(flags.corpus.out, *settings);
  if (!corpus.ok()) {
    err << "phaseloop corpus build: " << corpus.status().message() << "\n";
    return ExitCodeFor(corpus.status());
  }
  absl::StatusOr<Manifest> built =
      BuildModules(trees, *settings, flags.corpus.out, err);
  if (!built.ok()) {
    err << "phaseloop corpus build: " << built.status().message() << "\n";
    return ExitCodeFor(built.status());
  }
  // Nothing built: the corpus stays as it was (committing would list every
  // earlier module of these directories as gone and delete its bitcode).
  if (built->modules.empty() && built->skipped.empty()) {
    err << "phaseloop corpus build: no C source (*.c) under "
        << absl::StrJoin(flags.source_dirs, ", ") << "; pass the directories "
        << "holding the programs' .c files (" << flags.corpus.out
        << " is left as it was)\n";
    return command::kExitBadInput;
  }
  if (built->modules.empty()) {
    err << "phaseloop corpus build: no module was built from "
        << flags.source_dirs.size() << " directories, so " << flags.corpus.out
        << " is left as it was; why each program was skipped:\n";
    int shown = 0;
    for (const SkippedEntry& s : built->skipped) {
      if (++shown > 10) {
        err << "  ... and " << built->skipped.size() - 10 << " more\n";
        break;
      }
      err << "  " << s.name << ": "
          << std::string_view(s.reason).substr(0, s.reason.find('\n')) << "\n";
    }
    return command::kExitBadInput;
  }
  std::set<std::string> origins;
  for (const SourceTree& t : trees) origins.insert(t.origin);
  absl::Status committed =
      CommitCorpus(flags.corpus.out, *corpus, *built, origins);
  if (!committed.ok()) {
    err << "phaseloop corpus build: " << committed.message() << "\n";
    return command::kExitInternal;
  }
  out << "built " << built->modules.size() << " modules, skipped "
      << built->skipped.size() << " (reasons in " << flags.corpus.out
      << "/manifest.json)\n";
  PrintSummary(flags.corpus.out, *corpus, timing::SecondsSince(start), out);
  return command::kExitOk;
}

int RunFetchDebian(const FetchDebianFlags& flags, std::ostream& out,
                   std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CorpusSettings> settings = SettingsFrom(flags.corpus);
  if (!settings.ok()) {
    err << "phaseloop corpus fetch-debian: " << settings.status().message()
        << "\n";
    return command::kExitBadInput;
  }
  absl::StatusOr<Manifest> corpus = OpenCorpus(flags.corpus.out, *settings);
  if (!corpus.ok()) {
    err << "phaseloop corpus fetch-debian: " << corpus.status().message()
        << "\n";
    return ExitCodeFor(corpus.status());
  }
  const std::vector<std::string>& packages =
      flags.packages.empty() ? DefaultDebianPackages() : flags.packages;
  const std::string cache =
      flags.cache.empty() ? DefaultDebianCache() : flags.cache;
  // 1. Fetch (sequential: one private apt index).
  DebianFetcher fetcher(cache);
  std::vector<DebianSource> to_build;
  std::vector<std::string> ready, failed;
  const std::set<std::string> present = OriginsOf(*corpus);
  for (const std::string& package : packages) {
    absl::StatusOr<DebianSource> source = fetcher.Fetch(package, err);
    if (!source.ok()) {
      err << "fetch-debian: " << package
          << " skipped: " << source.status().message() << "\n";
      failed.push_back(package);
      Manifest update;
      update.skipped.push_back({package, "debian:" + package, "package",
                                std::string(source.status().message())});
      (void)CommitCorpus(flags.corpus.out, *corpus, update,
                         {"debian:" + package});
      continue;
    }
    if (!flags.rebuild && present.count(source->origin())) {
      const bool has_modules =
          std::any_of(corpus->modules.begin(), corpus->modules.end(),
                      [&](const v1::ModuleRecord& r) {
                        return r.origin() == source->origin();
                      });
      err << "fetch-debian: " << package
          << (has_modules ? " already in the corpus (" : " failed before (")
          << source->origin() << "); --rebuild to build it again\n";
      (has_modules ? ready : failed).push_back(package);
      continue;
    }
    to_build.push_back(*source);
  }
  // 2. A private copy of each tree (DIR/.sources/<pkg>), ./configure where
  //    needed, in parallel.
  std::vector<std::string> notes(to_build.size()), trees(to_build.size());
  const std::string work_root =
      (fs::path(flags.corpus.out) / ".sources").string();
  std::mutex mu;
  process::ParallelFor(to_build.size(), settings->jobs, [&](size_t i) {
    absl::StatusOr<std::string> tree = PrepareWorkTree(to_build[i], work_root);
    if (!tree.ok()) {
      notes[i] = std::string(tree.status().message());
      return;
    }
    trees[i] = *tree;
    {
      std::lock_guard<std::mutex> lock(mu);
      err << "fetch-debian: configuring " << to_build[i].package
          << " if needed\n";
    }
    notes[i] = ConfigureTree(*tree, flags.configure_timeout_seconds);
  });
  // 3. Build and commit one package at a time (an interrupted run resumes).
  for (size_t i = 0; i < to_build.size(); ++i) {
    const DebianSource& source = to_build[i];
    err << "fetch-debian: building " << source.package << " ("
        << source.origin() << ")" << (notes[i].empty() ? "" : "; ") << notes[i]
        << "\n";
    absl::StatusOr<Manifest> built =
        trees[i].empty()
            ? absl::StatusOr<Manifest>(absl::InternalError(notes[i]))
            : BuildModules({{trees[i], source.package, source.origin()}},
                           *settings, flags.corpus.out, err);
    Manifest update = built.ok() ? *built : Manifest{};
    if (!built.ok() || built->modules.empty()) {
      std::string reason =
          built.ok() ? absl::StrCat("no module built (", built->skipped.size(),
                                    " programs/sources failed)")
                     : std::string(built.status().message());
      if (!notes[i].empty()) absl::StrAppend(&reason, "; ", notes[i]);
      update.skipped.push_back(
          {source.package, source.origin(), "package", reason});
      failed.push_back(source.package);
    } else {
      ready.push_back(source.package);
    }
    absl::Status committed =
        CommitCorpus(flags.corpus.out, *corpus, update,
                     {source.origin(), "debian:" + source.package});
    if (!committed.ok()) {
      err << "phaseloop corpus fetch-debian: " << committed.message() << "\n";
      return command::kExitInternal;
    }
  }
  out << "packages: " << ready.size() << " in the corpus, " << failed.size()
      << " skipped" << (failed.empty() ? "" : " (");
  for (size_t i = 0; i < failed.size(); ++i) {
    out << (i ? " " : "") << failed[i];
  }
  out << (failed.empty() ? "" : ")") << "\n";
  PrintSummary(flags.corpus.out, *corpus, timing::SecondsSince(start), out);
  return ready.empty() ? command::kExitInternal : command::kExitOk;
}

int RunGenerate(const GenerateFlags& flags, std::ostream& out,
                std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CorpusSettings> settings = SettingsFrom(flags.corpus);
  if (!settings.ok()) {
    err << "phaseloop corpus generate: " << settings.status().message() << "\n";
    return command::kExitBadInput;
  }
  absl::StatusOr<Manifest> corpus = OpenCorpus(flags.corpus.out, *settings);
  if (!corpus.ok()) {
    err << "phaseloop corpus generate: " << corpus.status().message() << "\n";
    return ExitCodeFor(corpus.status());
  }
  CsmithOptions options;
  options.count = flags.csmith;
  options.first_seed = flags.seed;
  options.timeout_ms = flags.timeout_ms;
  absl::StatusOr<Manifest> generated =
      GenerateCsmithModules(options, *settings, flags.corpus.out, err);
  if (!generated.ok()) {
    err << "phaseloop corpus generate: " << generated.status().message()
        << "\n";
    return absl::IsFailedPrecondition(generated.status())
               ? command::kExitInternal
               : ExitCodeFor(generated.status());
  }
  absl::Status committed = CommitCorpus(flags.corpus.out, *corpus, *generated,
                                        OriginsOf(*generated));
  if (!committed.ok()) {
    err << "phaseloop corpus generate: " << committed.message() << "\n";
    return command::kExitInternal;
  }
  out << "generated " << generated->modules.size() << " csmith modules ("
      << generated->skipped.size() << " seeds rejected)\n";
  PrintSummary(flags.corpus.out, *corpus, timing::SecondsSince(start), out);
  return static_cast<int>(generated->modules.size()) == flags.csmith
             ? command::kExitOk
             : command::kExitInternal;
}

void AddCorpusCommand(CLI::App& app, int& exit_code) {
  CLI::App* corpus = command::AddCommandGroup(
      app, "corpus",
      "Build corpora of real programs as unoptimised LLVM modules");

  auto [b, build] = command::AddSubcommand<BuildFlags>(
      *corpus, "build", "One linked module per program found under SRC_DIR...",
      exit_code, [](const BuildFlags& flags) {
        return RunCorpusBuild(flags, std::cout, std::cerr);
      });
  b->add_option("SRC_DIR", build->source_dirs, "directories of C sources")
      ->required();
  AddCommonFlags(b, build->corpus);

  auto [f, fetch] = command::AddSubcommand<FetchDebianFlags>(
      *corpus, "fetch-debian",
      "Download Debian 12 source packages and build their programs "
      "(no PKG: the default list of real packages)",
      exit_code, [](const FetchDebianFlags& flags) {
        return RunFetchDebian(flags, std::cout, std::cerr);
      });
  f->add_option("PKG", fetch->packages, "Debian source package names");
  AddCommonFlags(f, fetch->corpus);
  f->add_option("--cache", fetch->cache,
                "download cache (default ~/.cache/phaseloop/debian-src)");
  f->add_option("--configure-timeout", fetch->configure_timeout_seconds,
                "seconds ./configure may run per package")
      ->capture_default_str();
  f->add_flag("--rebuild", fetch->rebuild,
              "build packages already in the corpus again");

  auto [g, generate] = command::AddSubcommand<GenerateFlags>(
      *corpus, "generate",
      "Random C programs (csmith) that compile and terminate", exit_code,
      [](const GenerateFlags& flags) {
        return RunGenerate(flags, std::cout, std::cerr);
      });
  g->add_option("--csmith", generate->csmith, "number of programs")
      ->required()
      ->check(command::PositiveNumber());
  AddCommonFlags(g, generate->corpus);
  g->add_option("--seed", generate->seed, "first csmith seed")
      ->capture_default_str();
  g->add_option("--timeout-ms", generate->timeout_ms,
                "run-time limit of each -O0 binary")
      ->capture_default_str()
      ->check(command::PositiveNumber());
}

}  // namespace phaseloop::corpus
