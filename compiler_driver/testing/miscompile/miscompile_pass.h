#ifndef PHASELOOP_COMPILER_DRIVER_TESTING_MISCOMPILE_MISCOMPILE_PASS_H_
#define PHASELOOP_COMPILER_DRIVER_TESTING_MISCOMPILE_MISCOMPILE_PASS_H_

// A deliberate miscompile, so that tests can show the staging harness
// catches one, records it and blocks the pipeline that made it. Test-only:
// the library is testonly (nothing shipped can depend on it) and registers
// the pass `phaseloop-test-miscompile` with passes/pass_extensions only in
// binaries that link it (the test wrapper in this folder). Everywhere else
// a policy naming it is refused by pipeline_check and the wrapper runs the
// baseline.
//
// Pipeline text: phaseloop-test-miscompile            (a module pass)
//                phaseloop-test-miscompile<function=NAME>

#include <string>

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"

namespace phaseloop::testing {

inline constexpr char kMiscompilePassName[] = "phaseloop-test-miscompile";

// Turns exactly one integer `add` (scalar or vector) inside a loop into a
// `sub` of the same operands, without wrap flags (so the program computes a
// wrong value; no undefined behaviour is added). The add is the first, in
// instruction order, whose operands are both non-constant — a data add such
// as a sum, never a counter's constant step, so the loop still ends — of
// the first function by name that has one (or of `function` only, when
// given). Deterministic: the same module gives the same change. Returns
// what it changed ("@sum: '%add = add nsw i32 %s, %x' became a sub"), or ""
// when there is no such add (the module is left unchanged).
std::string CorruptOneLoopAdd(llvm::Module& module,
                              llvm::StringRef function = "");

class MiscompilePass : public llvm::PassInfoMixin<MiscompilePass> {
 public:
  explicit MiscompilePass(std::string function = "")
      : function_(std::move(function)) {}
  llvm::PreservedAnalyses run(llvm::Module& module,
                              llvm::ModuleAnalysisManager& analyses);
  static bool isRequired() { return true; }  // runs on optnone code too

 private:
  std::string function_;
};

}  // namespace phaseloop::testing

#endif  // PHASELOOP_COMPILER_DRIVER_TESTING_MISCOMPILE_MISCOMPILE_PASS_H_
