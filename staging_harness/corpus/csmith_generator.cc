#include "staging_harness/corpus/csmith_generator.h"

#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "common/process/parallel_for.h"
#include "common/process/subprocess.h"
#include "compiler_driver/ir/module_loader.h"
#include "llvm/IR/LLVMContext.h"

namespace phaseloop::corpus {
namespace {

namespace fs = std::filesystem;

struct Attempt {
  std::optional<v1::ModuleRecord> record;
  std::string reject_reason;
};

}  // namespace

absl::StatusOr<std::string> CsmithVersion(const std::string& csmith) {
  absl::StatusOr<process::ProcessResult> run =
      process::RunProcess({{csmith, "--version"}});
  if (!run.ok() || run->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", csmith,
                     "' is not installed; run tools/setup.sh (Debian "
                     "packages csmith and libcsmith-dev)"));
  }
  const std::string& out = run->output;
  const size_t start = out.find_first_of("0123456789");
  if (start == std::string::npos) return std::string("unknown");
  return out.substr(start, out.find_first_of(" \n", start) - start);
}

absl::StatusOr<Manifest> GenerateCsmithModules(const CsmithOptions& options,
                                               const CorpusSettings& settings,
                                               const std::string& corpus_dir,
                                               std::ostream& progress) {
  absl::Status valid = ValidateSettings(settings);
  if (!valid.ok()) return valid;
  if (options.count < 1 || options.timeout_ms < 1) {
    return absl::InvalidArgumentError("--csmith and --timeout-ms must be >= 1");
  }
  absl::StatusOr<std::string> version = CsmithVersion(options.csmith);
  if (!version.ok()) return version.status();
  std::error_code ec;
  if (!fs::exists(fs::path(options.include_dir) / "csmith.h", ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("csmith.h not found in ", options.include_dir,
                     "; install libcsmith-dev (tools/setup.sh does)"));
  }
  const fs::path sources = fs::path(corpus_dir) / "sources" / "csmith";
  const fs::path work = fs::path(corpus_dir) / ".work";
  fs::create_directories(sources, ec);
  fs::create_directories(work, ec);

  auto attempt = [&](uint64_t seed) -> Attempt {
    const std::string stem = std::to_string(seed);
    const fs::path source = sources / (stem + ".c");
    const fs::path binary = work / ("csmith-" + stem);
    absl::StatusOr<process::ProcessResult> gen = process::RunProcess(
        {{options.csmith, "--seed", stem, "-o", source.string()}, "", {}, 60});
    if (!gen.ok() || gen->exit_code != 0) {
      return {std::nullopt, "csmith failed"};
    }
    absl::StatusOr<process::ProcessResult> cc = process::RunProcess(
        {{settings.clang, "-O0", "-w", "-I" + options.include_dir,
          source.string(), "-o", binary.string()},
         "",
         {},
         120});
    if (!cc.ok() || cc->exit_code != 0) {
      fs::remove(source, ec);
      return {std::nullopt,
              absl::StrCat("does not compile at -O0: ",
                           cc.ok() ? process::ShortReason(cc->output) : "")};
    }
    absl::StatusOr<process::ProcessResult> run = process::RunProcess(
        {{binary.string()}, "", {}, options.timeout_ms / 1000.0});
    fs::remove(binary, ec);
    if (!run.ok() || run->timed_out || run->exit_code != 0) {
      fs::remove(source, ec);
      return {std::nullopt, !run.ok() || !run->timed_out
                                ? absl::StrCat("-O0 binary exited with ",
                                               run.ok() ? run->exit_code : -1)
                                : absl::StrCat("-O0 binary ran longer than ",
                                               options.timeout_ms, " ms")};
    }
    llvm::LLVMContext context;
    absl::StatusOr<std::unique_ptr<llvm::Module>> module = ir::LoadModule(
        source.string(), FrontendFor(settings, {"-I" + options.include_dir}),
        context);
    if (!module.ok()) {
      return {std::nullopt,
              process::ShortReason(std::string(module.status().message()))};
    }
    absl::StatusOr<v1::ModuleRecord> record =
        WriteCorpusModule(*std::move(module), "csmith/" + stem,
                          absl::StrCat("csmith:", *version, " seed=", stem),
                          settings, corpus_dir);
    if (!record.ok())
      return {std::nullopt, std::string(record.status().message())};
    return {*std::move(record), ""};
  };

  Manifest out;
  out.convention = ir::ConventionName(settings.convention);
  out.opt_level = OptLevelLabel(settings);
  const uint64_t limit = static_cast<uint64_t>(options.count) *
                         static_cast<uint64_t>(options.max_attempts_per_module);
  uint64_t tried = 0;
  while (static_cast<int>(out.modules.size()) < options.count &&
         tried < limit) {
    const size_t batch = static_cast<size_t>(std::min<uint64_t>(
        limit - tried,
        std::max<uint64_t>(settings.jobs, options.count - out.modules.size())));
    std::vector<Attempt> results(batch);
    process::ParallelFor(batch, settings.jobs, [&](size_t i) {
      results[i] = attempt(options.first_seed + tried + i);
    });
    for (size_t i = 0; i < batch; ++i) {
      const uint64_t seed = options.first_seed + tried + i;
      const std::string name = absl::StrCat("csmith/", seed);
      if (static_cast<int>(out.modules.size()) == options.count) {
        if (results[i].record) {  // beyond the count: not part of this corpus
          fs::remove(fs::path(corpus_dir) / results[i].record->bitcode_path(),
                     ec);
          fs::remove(sources / absl::StrCat(seed, ".c"), ec);
        }
        continue;
      }
      if (results[i].record) {
        out.modules.push_back(*results[i].record);
        progress << "csmith: " << name << " ok (" << out.modules.size() << "/"
                 << options.count << ")\n";
      } else {
        out.skipped.push_back(
            {name, absl::StrCat("csmith:", *version, " seed=", seed), "program",
             results[i].reject_reason});
        progress << "csmith: " << name
                 << " rejected: " << results[i].reject_reason << "\n";
      }
    }
    tried += batch;
  }
  fs::remove_all(work, ec);
  if (static_cast<int>(out.modules.size()) < options.count) {
    progress << "csmith: only " << out.modules.size() << " of " << options.count
             << " programs accepted after " << tried << " seeds\n";
  }
  return out;
}

}  // namespace phaseloop::corpus
