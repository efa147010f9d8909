#include "compiler_driver/passes/pass_runner.h"

#include "absl/strings/str_cat.h"
#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/PassManager.h"

namespace phaseloop::passes {

llvm::PipelineTuningOptions TuningFor(ir::OptLevel level,
                                      PipelineFlavor flavor) {
  llvm::PipelineTuningOptions tuning;  // opt-16's defaults
  if (flavor == PipelineFlavor::kOpt) return tuning;
  // clang-16: -funroll-loops defaults on above -O1 (Os/Oz count as -O2);
  // interleaving follows unrolling; vectorizers per the driver's rules.
  using ir::OptLevel;
  bool unroll = level == OptLevel::kO2 || level == OptLevel::kO3 ||
                level == OptLevel::kOs || level == OptLevel::kOz;
  tuning.LoopUnrolling = unroll;
  tuning.LoopInterleaving = unroll;
  tuning.LoopVectorization = level == OptLevel::kO2 ||
                             level == OptLevel::kO3 || level == OptLevel::kOs;
  tuning.SLPVectorization = unroll;
  tuning.MergeFunctions = false;
  return tuning;
}

std::string DefaultPipelineText(ir::OptLevel level) {
  return absl::StrCat("default<", ir::OptLevelName(level), ">");
}

PassRunner::PassRunner(llvm::TargetMachine* target_machine,
                       llvm::PipelineTuningOptions tuning)
    : target_machine_(target_machine), tuning_(tuning) {}

absl::Status PassRunner::Validate(const std::string& pipeline) {
  llvm::PassBuilder builder(target_machine_, tuning_);
  llvm::ModulePassManager mpm;
  if (llvm::Error error = builder.parsePassPipeline(mpm, pipeline)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid pass pipeline '", pipeline,
                     "': ", llvm::toString(std::move(error))));
  }
  return absl::OkStatus();
}

absl::Status PassRunner::Run(llvm::Module& module,
                             const std::string& pipeline) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(target_machine_, tuning_);
  fam.registerPass([&] { return builder.buildDefaultAAPipeline(); });
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::ModulePassManager mpm;
  if (llvm::Error error = builder.parsePassPipeline(mpm, pipeline)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid pass pipeline '", pipeline,
                     "': ", llvm::toString(std::move(error))));
  }
  mpm.run(module, mam);
  return absl::OkStatus();
}

}  // namespace phaseloop::passes
