#include "compiler_driver/ir/opt_level.h"

namespace phaseloop::ir {

const char* OptLevelName(OptLevel level) {
  switch (level) {
    case OptLevel::kO0:
      return "O0";
    case OptLevel::kO1:
      return "O1";
    case OptLevel::kO2:
      return "O2";
    case OptLevel::kO3:
      return "O3";
    case OptLevel::kOs:
      return "Os";
    case OptLevel::kOz:
      return "Oz";
  }
  return "O0";
}

std::optional<OptLevel> ParseOptLevel(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  for (OptLevel level : {OptLevel::kO0, OptLevel::kO1, OptLevel::kO2,
                         OptLevel::kO3, OptLevel::kOs, OptLevel::kOz}) {
    if (text == OptLevelName(level)) return level;
  }
  return std::nullopt;
}

llvm::OptimizationLevel ToLlvm(OptLevel level) {
  switch (level) {
    case OptLevel::kO0:
      return llvm::OptimizationLevel::O0;
    case OptLevel::kO1:
      return llvm::OptimizationLevel::O1;
    case OptLevel::kO2:
      return llvm::OptimizationLevel::O2;
    case OptLevel::kO3:
      return llvm::OptimizationLevel::O3;
    case OptLevel::kOs:
      return llvm::OptimizationLevel::Os;
    case OptLevel::kOz:
      return llvm::OptimizationLevel::Oz;
  }
  return llvm::OptimizationLevel::O0;
}

int CodegenLevel(OptLevel level) {
  switch (level) {
    case OptLevel::kO0:
      return 0;
    case OptLevel::kO1:
      return 1;
    case OptLevel::kO3:
      return 3;
    default:
      return 2;
  }
}

}  // namespace phaseloop::ir
