#ifndef PHASELOOP_COMPILER_DRIVER_PASSES_PASS_RUNNER_H_
#define PHASELOOP_COMPILER_DRIVER_PASSES_PASS_RUNNER_H_

#include <string>

#include "absl/status/status.h"
#include "compiler_driver/ir/opt_level.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

namespace phaseloop::passes {

// Whose defaults tune the standard pipelines. clang-16 and opt-16 differ:
// clang turns the loop vectorizer on at O2/O3/Os and the SLP vectorizer on at
// O2/O3/Os/Oz; opt leaves SLP off. Sources use kClang, IR files kOpt, so each
// baseline reproduces the tool a user would compare with.
enum class PipelineFlavor { kClang, kOpt };

llvm::PipelineTuningOptions TuningFor(ir::OptLevel level, PipelineFlavor flavor);

// The text of clang's standard pipeline at `level`: "default<Oz>".
std::string DefaultPipelineText(ir::OptLevel level);

// Runs new-pass-manager pipelines on modules, in process. Each Run uses fresh
// analysis managers, so no stale analysis survives between runs. The target
// machine (not owned, may be null) provides TTI for target-aware passes.
// Not thread-safe; the module must live in a context used by this thread only.
class PassRunner {
 public:
  PassRunner(llvm::TargetMachine* target_machine,
             llvm::PipelineTuningOptions tuning);

  // Parses and runs `pipeline` (PassBuilder text). A parse error is
  // InvalidArgument naming the text; the module is untouched then.
  absl::Status Run(llvm::Module& module, const std::string& pipeline);

  // Checks that `pipeline` parses, without running it.
  absl::Status Validate(const std::string& pipeline);

 private:
  llvm::TargetMachine* target_machine_;
  llvm::PipelineTuningOptions tuning_;
};

}  // namespace phaseloop::passes

#endif  // PHASELOOP_COMPILER_DRIVER_PASSES_PASS_RUNNER_H_
