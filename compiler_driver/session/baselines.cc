#include "compiler_driver/session/baselines.h"

#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/collected_diagnostics.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/session/pass_target.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::session {
namespace {

// Runs default<level> on `module` (consumed) and measures it.
// LLVM's errors while optimising or emitting (an inline asm label defined
// twice once inlined) are a status: with no handler LLVM calls exit(1).
absl::StatusOr<Baseline> Measure(std::unique_ptr<llvm::Module> module,
                                 ir::OptLevel level,
                                 passes::PipelineFlavor flavor) {
  ir::CollectedDiagnostics diagnostics(module->getContext());
  const std::string name = module->getModuleIdentifier();
  absl::StatusOr<std::unique_ptr<codegen::ObjectEmitter>> emitter =
      codegen::ObjectEmitter::ForModule(*module, ir::CodegenLevel(level));
  if (!emitter.ok()) return emitter.status();
  passes::PassRunner runner(PassTargetMachine(**emitter, flavor),
                            passes::TuningFor(level, flavor));
  absl::Status run = runner.Run(*module, passes::DefaultPipelineText(level));
  if (!run.ok()) return run;
  Baseline baseline{level};
  baseline.ir_count = observation::IrInstructionCount(*module);
  absl::StatusOr<std::string> object =
      (*emitter)->EmitObject(std::move(module));
  if (absl::Status errors = diagnostics.ErrorsAsStatus(name); !errors.ok()) {
    return errors;
  }
  if (!object.ok()) return object.status();
  absl::StatusOr<codegen::ObjectSizes> sizes =
      codegen::MeasureObjectSizes(*object);
  if (!sizes.ok()) return sizes.status();
  baseline.text_size = sizes->text_size;
  baseline.alloc_size = sizes->alloc_size;
  return baseline;
}

}  // namespace

const std::vector<ir::OptLevel>& AllOptLevels() {
  static const std::vector<ir::OptLevel> levels = {
      ir::OptLevel::kO0, ir::OptLevel::kO1, ir::OptLevel::kO2,
      ir::OptLevel::kO3, ir::OptLevel::kOs, ir::OptLevel::kOz};
  return levels;
}

absl::StatusOr<std::vector<Baseline>> SourceBaselines(
    const std::string& source, const ir::FrontendOptions& frontend,
    const std::vector<ir::OptLevel>& levels) {
  std::vector<Baseline> out;
  for (ir::OptLevel level : levels) {
    ir::FrontendOptions at_level = frontend;
    at_level.opt_level = level;
    llvm::LLVMContext context;
    absl::StatusOr<std::unique_ptr<llvm::Module>> module =
        ir::LoadModule(source, at_level, context);
    if (!module.ok()) return module.status();
    absl::StatusOr<Baseline> b =
        Measure(std::move(*module), level, passes::PipelineFlavor::kClang);
    if (!b.ok()) return b.status();
    out.push_back(*b);
  }
  return out;
}

absl::StatusOr<std::vector<Baseline>> ModuleBaselines(
    const llvm::Module& module, const std::vector<ir::OptLevel>& levels,
    passes::PipelineFlavor flavor) {
  std::vector<Baseline> out;
  for (ir::OptLevel level : levels) {
    absl::StatusOr<Baseline> b =
        Measure(llvm::CloneModule(module), level, flavor);
    if (!b.ok()) return b.status();
    out.push_back(*b);
  }
  return out;
}

absl::StatusOr<std::vector<Baseline>> FileBaselines(
    const std::string& path, const ir::FrontendOptions& frontend,
    const std::vector<ir::OptLevel>& levels) {
  if (ir::IsSourcePath(path)) return SourceBaselines(path, frontend, levels);
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      ir::LoadModule(path, frontend, context);
  if (!module.ok()) return module.status();
  return ModuleBaselines(**module, levels);
}

}  // namespace phaseloop::session
