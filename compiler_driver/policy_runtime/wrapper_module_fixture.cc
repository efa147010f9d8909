#include "compiler_driver/policy_runtime/wrapper_module_fixture.h"

#include <utility>

#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"

namespace phaseloop::policy_runtime::testing {

absl::Status LoadWrapperModule(const std::string& fixture,
                               llvm::LLVMContext& context, WrapperModule* out) {
  ir::FrontendOptions frontend;
  frontend.opt_level = ir::OptLevel::kOz;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      ir::LoadModule("compiler_driver/fixtures/" + fixture, frontend, context);
  if (!module.ok()) return module.status();
  absl::StatusOr<std::unique_ptr<codegen::ObjectEmitter>> emitter =
      codegen::ObjectEmitter::ForModule(**module,
                                        ir::CodegenLevel(ir::OptLevel::kOz));
  if (!emitter.ok()) return emitter.status();
  out->module = std::move(*module);
  out->emitter = std::move(*emitter);
  out->runner = std::make_unique<passes::PassRunner>(
      &out->emitter->target_machine(),
      passes::TuningFor(ir::OptLevel::kOz, passes::PipelineFlavor::kClang));
  return absl::OkStatus();
}

}  // namespace phaseloop::policy_runtime::testing
