#include "staging_harness/corpus/module_writer.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/session/baselines.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "staging_harness/corpus/manifest.h"

namespace phaseloop::corpus {
namespace {

absl::Status WriteAtomically(const std::string& path,
                             const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(),
                                      ec);
  return files::WriteFileAtomically(path, bytes);
}

// Clang tags inline asm calls (and calls to error/warning-attributed
// functions) with !srcloc, an offset in its source manager, for backend
// diagnostics only. Offsets count the `-include <absolute config.h>` line of
// the predefines, so the same sources in a longer directory gave other
// bytes and another module_hash. Code is unaffected.
void DropInlineAsmSourceLocations(llvm::Module& module) {
  const unsigned srcloc = module.getMDKindID("srcloc");
  for (llvm::Function& function : module) {
    for (llvm::BasicBlock& block : function) {
      for (llvm::Instruction& instruction : block) {
        instruction.setMetadata(srcloc, nullptr);
      }
    }
  }
}

}  // namespace

absl::Status ValidateSettings(const CorpusSettings& settings) {
  if (settings.objective != "size" && settings.objective != "speed") {
    return absl::InvalidArgumentError(
        absl::StrCat("--objective '", settings.objective,
                     "' is not 'size' (frontend -Oz) or 'speed' (-O3)"));
  }
  if (settings.jobs < 1) {
    return absl::InvalidArgumentError("--jobs must be at least 1");
  }
  return absl::OkStatus();
}

std::string OptLevelLabel(const CorpusSettings& settings) {
  if (settings.convention == ir::ModuleConvention::kResearch) return "O0";
  return settings.objective == "speed" ? "O3" : "Oz";
}

ir::FrontendOptions FrontendFor(
    const CorpusSettings& settings, const std::vector<std::string>& group_args,
    const std::vector<std::string>& directory_cflags) {
  ir::FrontendOptions options;
  options.opt_level =
      settings.objective == "speed" ? ir::OptLevel::kO3 : ir::OptLevel::kOz;
  options.convention = settings.convention;
  options.clang = settings.clang;
  options.extra_args = {"-w", "-Wno-error=implicit-function-declaration",
                        "-Wno-error=implicit-int", "-Wno-error=int-conversion",
                        "-Wno-error=incompatible-function-pointer-types",
                        // Autotools Makefiles define it; sources rely on it.
                        "-DLOCALEDIR=\"/usr/share/locale\""};
  options.extra_args.insert(options.extra_args.end(), group_args.begin(),
                            group_args.end());
  options.extra_args.insert(options.extra_args.end(), settings.cflags.begin(),
                            settings.cflags.end());
  options.extra_args.insert(options.extra_args.end(),
                            directory_cflags.begin(), directory_cflags.end());
  options.source_date_epoch = settings.source_date_epoch;
  return options;
}

std::string BitcodePathFor(const std::string& name) {
  std::string safe;
  for (char c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                    c == '_' || c == '+' || c == '-' || c == '/';
    safe += ok ? c : '_';
  }
  return absl::StrCat(kModulesDir, "/", safe, ".bc");
}

absl::StatusOr<v1::ModuleRecord> WriteCorpusModule(
    std::unique_ptr<llvm::Module> module, const std::string& name,
    const std::string& origin, const CorpusSettings& settings,
    const std::string& corpus_dir) {
  module->setModuleIdentifier(name);
  module->setSourceFileName(name);
  DropInlineAsmSourceLocations(*module);
  // The session hashes the bitcode of the module it parsed from the file;
  // store exactly those bytes so module_hash joins.
  const std::string first = ir::ModuleBitcode(*module);
  absl::StatusOr<std::unique_ptr<llvm::Module>> reparsed =
      ir::ParseModule(first, name, module->getContext());
  if (!reparsed.ok()) return reparsed.status();
  module.reset();
  const std::string bytes = ir::ModuleBitcode(**reparsed);

  absl::StatusOr<std::vector<session::Baseline>> baselines =
      session::ModuleBaselines(
          **reparsed,
          {ir::OptLevel::kO0, ir::OptLevel::kO3, ir::OptLevel::kOz});
  if (!baselines.ok()) {
    return absl::InternalError(
        absl::StrCat("baselines failed: ", baselines.status().message()));
  }
  v1::ModuleRecord record;
  record.set_module_hash(ir::ContentHash(bytes));
  record.set_name(name);
  record.set_origin(origin);
  record.set_convention(ir::ConventionName(settings.convention));
  record.set_opt_level(OptLevelLabel(settings));
  record.set_split(SplitForName(name));
  record.set_ir_count_o0((*baselines)[0].ir_count);
  record.set_ir_count_o3((*baselines)[1].ir_count);
  record.set_text_size_o3((*baselines)[1].text_size);
  record.set_ir_count_oz((*baselines)[2].ir_count);
  record.set_text_size_oz((*baselines)[2].text_size);
  record.set_alloc_size_o3((*baselines)[1].alloc_size);
  record.set_alloc_size_oz((*baselines)[2].alloc_size);
  record.set_bitcode_path(BitcodePathFor(name));
  absl::Status written = WriteAtomically(
      (std::filesystem::path(corpus_dir) / record.bitcode_path()).string(),
      bytes);
  if (!written.ok()) return written;
  return record;
}

}  // namespace phaseloop::corpus
