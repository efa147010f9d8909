#ifndef PHASELOOP_COMPILER_DRIVER_IR_OPT_LEVEL_H_
#define PHASELOOP_COMPILER_DRIVER_IR_OPT_LEVEL_H_

#include <optional>
#include <string>
#include <string_view>

#include "llvm/Passes/OptimizationLevel.h"

namespace phaseloop::ir {

// The user's -O level, as clang spells it.
enum class OptLevel { kO0, kO1, kO2, kO3, kOs, kOz };

// "O0".."Oz"; ParseOptLevel also accepts a leading '-' ("-Oz").
const char* OptLevelName(OptLevel level);
std::optional<OptLevel> ParseOptLevel(std::string_view text);

llvm::OptimizationLevel ToLlvm(OptLevel level);

// The level the backend (codegen) runs at for this -O level, as clang maps it:
// O0 -> 0, O1 -> 1, O2/Os/Oz -> 2, O3 -> 3.
int CodegenLevel(OptLevel level);

}  // namespace phaseloop::ir

#endif  // PHASELOOP_COMPILER_DRIVER_IR_OPT_LEVEL_H_
