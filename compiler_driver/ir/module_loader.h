#ifndef PHASELOOP_COMPILER_DRIVER_IR_MODULE_LOADER_H_
#define PHASELOOP_COMPILER_DRIVER_IR_MODULE_LOADER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/ir/opt_level.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace phaseloop::ir {

// How a C/C++ source becomes an unoptimised module.
//  kRealBuild: the way a real build compiles it before optimisation,
//    `clang-16 -O<level> -Xclang -disable-llvm-passes -emit-llvm`: functions
//    keep optsize/minsize and are not noinline. The product's default.
//  kResearch: `-O0 -Xclang -disable-O0-optnone` (CompilerGym and the papers):
//    every function noinline, no size attributes. Only for comparing with
//    published figures.
enum class ModuleConvention { kRealBuild, kResearch };

const char* ConventionName(ModuleConvention convention);

struct FrontendOptions {
  OptLevel opt_level = OptLevel::kOz;
  ModuleConvention convention = ModuleConvention::kRealBuild;
  std::string clang = "clang-16";
  // Extra frontend flags (-D, -I, -std, ...), passed before the source.
  std::vector<std::string> extra_args;
  // When set, clang runs with SOURCE_DATE_EPOCH=<this> (seconds since the
  // epoch), so __DATE__ and __TIME__ expand to that instant instead of now:
  // the same source then gives the same module (and module_hash) whenever
  // it is compiled. "" = clang's environment as inherited.
  std::string source_date_epoch;
};

// True for paths clang treats as C or C++ sources.
bool IsSourcePath(const std::string& path);

// Runs the frontend on a C/C++ source and returns the bitcode bytes.
// Errors name the file and carry clang's diagnostics.
absl::StatusOr<std::string> CompileToBitcode(const std::string& source_path,
                                             const FrontendOptions& options);

// Parses bitcode or textual IR (detected from the bytes) and verifies it
// (verify = false: only for bytes clang itself just wrote). `name` is used in
// error messages only.
absl::StatusOr<std::unique_ptr<llvm::Module>> ParseModule(
    const std::string& bytes, const std::string& name,
    llvm::LLVMContext& context, bool verify = true);

// Loads a .c/.cc/.cpp source (through the frontend), a .bc or a .ll file.
absl::StatusOr<std::unique_ptr<llvm::Module>> LoadModule(
    const std::string& path, const FrontendOptions& options,
    llvm::LLVMContext& context);

// Reads a whole file; a clear error names the path when it cannot.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace phaseloop::ir

#endif  // PHASELOOP_COMPILER_DRIVER_IR_MODULE_LOADER_H_
