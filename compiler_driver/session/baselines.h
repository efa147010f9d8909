#ifndef PHASELOOP_COMPILER_DRIVER_SESSION_BASELINES_H_
#define PHASELOOP_COMPILER_DRIVER_SESSION_BASELINES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/pass_runner.h"
#include "llvm/IR/Module.h"

namespace phaseloop::session {

// What clang-16's standard pipeline at one -O level gives on a module.
struct Baseline {
  ir::OptLevel level;
  int64_t ir_count = 0;
  int64_t text_size = 0;
  int64_t alloc_size = 0;  // the object's allocated bytes (SHF_ALLOC)
};

const std::vector<ir::OptLevel>& AllOptLevels();

// For a C/C++ source: the frontend runs at each level the way a real build
// does (`-O<level> -Xclang -disable-llvm-passes`), then default<level> with
// clang's tuning, then codegen at the level's codegen setting — so each figure
// equals `clang-16 -O<level> -emit-llvm` (ir_count) and `clang-16 -O<level> -c`
// (.text). `frontend.opt_level` is ignored; its flags and convention are kept.
absl::StatusOr<std::vector<Baseline>> SourceBaselines(
    const std::string& source, const ir::FrontendOptions& frontend,
    const std::vector<ir::OptLevel>& levels = AllOptLevels());

// For an IR module: default<level> with opt-16's tuning applied to a copy, as
// `opt-16 -passes='default<level>'` would; codegen at the level's setting.
// With `flavor` kClang, clang's tuning instead: what `clang-16 -O<level> -c
// module.bc` gives, which for a real-build module (frontend output at
// -O<level>, `-Xclang -disable-llvm-passes`) is the source's own `clang-16
// -O<level> -c` object.
absl::StatusOr<std::vector<Baseline>> ModuleBaselines(
    const llvm::Module& module,
    const std::vector<ir::OptLevel>& levels = AllOptLevels(),
    passes::PipelineFlavor flavor = passes::PipelineFlavor::kOpt);

// Baselines for any input the session accepts (source, .bc, .ll).
absl::StatusOr<std::vector<Baseline>> FileBaselines(
    const std::string& path, const ir::FrontendOptions& frontend,
    const std::vector<ir::OptLevel>& levels = AllOptLevels());

}  // namespace phaseloop::session

#endif  // PHASELOOP_COMPILER_DRIVER_SESSION_BASELINES_H_
