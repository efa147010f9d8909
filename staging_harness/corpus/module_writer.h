#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_MODULE_WRITER_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_MODULE_WRITER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/ir/module_loader.h"
#include "llvm/IR/Module.h"
#include "phaseloop/v1/episode.pb.h"

namespace phaseloop::corpus {

// What every module of one corpus shares: the objective picks the frontend
// -O level (size -> -Oz, speed -> -O3), the convention how the frontend runs.
struct CorpusSettings {
  std::string objective = "size";  // "size" or "speed"
  ir::ModuleConvention convention = ir::ModuleConvention::kRealBuild;
  std::string clang = "clang-16";
  std::vector<std::string> cflags;  // user -D/-I/-std flags, after ours
  int jobs = 1;
  // SOURCE_DATE_EPOCH for every frontend run: __DATE__/__TIME__ (giflib's
  // and xz's version banners use them) expand to this instant, so a corpus
  // rebuilt later or elsewhere has the same modules and module hashes.
  std::string source_date_epoch = "0";
  // Build C files named like tests too (program_discovery.h); by default
  // they are listed under the manifest's `skipped` instead.
  bool keep_test_sources = false;
};

// Validates the objective name; InvalidArgument says what is accepted.
absl::Status ValidateSettings(const CorpusSettings& settings);

// The frontend for one source of the corpus: -O<level> -Xclang
// -disable-llvm-passes (real-build) or -O0 -Xclang -disable-O0-optnone
// (research), warnings off, LOCALEDIR defined (as autotools Makefiles do),
// the implicit-declaration family of clang-16
// errors downgraded (old C still compiles as it does with gcc), then
// `group_args`, the user's cflags, then the directory's phaseloop-cflags
// flags (program_discovery.h); SOURCE_DATE_EPOCH from the settings.
ir::FrontendOptions FrontendFor(
    const CorpusSettings& settings, const std::vector<std::string>& group_args,
    const std::vector<std::string>& directory_cflags = {});

// The manifest's opt_level for these settings ("Oz", "O3"; "O0" research).
std::string OptLevelLabel(const CorpusSettings& settings);

// Makes `module` a corpus module and writes it: identifier and source file
// name set to `name` (no machine paths), bitcode round-tripped so that the
// stored bytes are exactly what a session loading the file hashes, O0/O3/Oz
// baselines measured, DIR/modules/<name>.bc written atomically. Thread-safe
// for modules in different LLVMContexts.
absl::StatusOr<v1::ModuleRecord> WriteCorpusModule(
    std::unique_ptr<llvm::Module> module, const std::string& name,
    const std::string& origin, const CorpusSettings& settings,
    const std::string& corpus_dir);

// "modules/<name>.bc" with characters other than [A-Za-z0-9._+/-] replaced.
std::string BitcodePathFor(const std::string& name);

}  // namespace phaseloop::corpus

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_MODULE_WRITER_H_
